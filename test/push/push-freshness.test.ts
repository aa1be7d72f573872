/** Pushed streams count for freshness: `status` shows them (push-only partners too) and the monitor's breach rule covers them. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../src/log.js';
import { pushFreshness } from '../../src/push/freshness.js';
import { PushService } from '../../src/push/service.js';
import { openStore, type Store } from '../../src/store/store.js';
import { assessStreams } from '../../src/worker/freshness-monitor.js';
import { readStates } from '../../src/worker/store-ports.js';
import { runCli } from '../support/cli.js';
import { loaderWith } from '../support/loader.js';
import { customer, gaming } from '../support/records.js';

describe('freshness of pushed streams', function () {
  this.timeout(30_000);
  let dir: string;
  let store: Store;
  let url: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'partner-sync-push-fresh-'));
    url = `sqlite:${join(dir, 's.sqlite')}`;
    store = await openStore({ url });
    const service = new PushService(loaderWith(store, []), { logger: silentLogger() });
    await service.push({ partner: 'pusher', variant: 'igaming', entity: 'customers', clientId: 'c', body: customer('c1'), bulk: false });
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    await service.push({ partner: 'pusher', variant: 'igaming', entity: 'activity', clientId: 'c', body: [gaming(yesterday, 'c1')], bulk: true });
    await service.close();
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the rule: nothing pushed for more than 5 minutes is behind; yesterday\'s activity not pushed by 06:00 UTC is late', () => {
    const now = new Date('2026-11-23T10:00:00Z');
    assert.deepEqual(pushFreshness('transactions', { last_received_at: '2026-11-23T09:56:00.000000Z' }, now), { state: 'ok', lagMs: 240_000, target: 'within 5 minutes', detail: 'pushed 4m ago' });
    assert.deepEqual(pushFreshness('customers', { last_received_at: '2026-11-23T09:54:00.000000Z' }, now), { state: 'behind', lagMs: 360_000, target: 'within 5 minutes', detail: 'nothing pushed for 6m (target 5m)' });
    assert.equal(pushFreshness('activity', { last_received_at: '2026-11-23T01:00:00Z', last_day: '2026-11-22' }, now).state, 'ok');
    assert.equal(pushFreshness('activity', { last_received_at: '2026-11-23T01:00:00Z', last_day: '2026-11-21' }, new Date('2026-11-23T05:59:00Z')).state, 'due');
    assert.deepEqual(pushFreshness('activity', { last_received_at: '2026-11-23T01:00:00Z', last_day: '2026-11-21' }, now).detail, '2026-11-22 not pushed, 4.0h past 06:00 UTC');
  });

  it('the worker\'s monitor assesses pushed-only streams from the store, and a silent push stream breaches', async () => {
    const states = await readStates(store);
    const fresh = assessStreams([], states, new Date());
    assert.deepEqual(fresh.map((a) => [a.partner, a.stream, a.freshness.state, a.breach]), [['pusher', 'customers', 'ok', false], ['pusher', 'activity', 'ok', false]]);
    const later = assessStreams([], states, new Date(Date.now() + 6 * 60_000));
    assert.deepEqual(later.map((a) => [a.stream, a.freshness.state, a.breach]), [['customers', 'behind', true], ['activity', 'ok', false]]);
    // A stream both pulled and pushed is fresh when either is.
    const both = assessStreams([{ partner: 'pusher', stream: 'customers' }], states, new Date());
    assert.deepEqual(both.map((a) => [a.stream, a.freshness.state, a.breach]), [['customers', 'ok', false], ['activity', 'ok', false]]);
  });

  it('status --json shows a push-only partner, fed by push, with its last push; --check fails once a pushed stream goes silent', async () => {
    await store.knex('push_streams').where({ partner_id: 'pusher', entity: 'customers' }).update({ last_received_at: new Date(Date.now() - 7 * 60_000).toISOString() });
    const r = await runCli(['--config', join(dir, 'no-config'), '--json', 'status', '--check'], { env: { STORE_URL: url } });
    assert.equal(r.code, 1, r.stderr);
    const out = JSON.parse(r.stdout) as {
      streams: { partner: string; stream: string; fed_by: string; last_pushed_at: string; pushed_records: number; freshness: { state: string } }[];
      check: { breaches: { partner: string; stream: string; state: string; detail: string }[] };
    };
    assert.deepEqual(out.streams.map((s) => [s.partner, s.stream, s.fed_by, s.pushed_records, s.freshness.state]), [['pusher', 'customers', 'push', 1, 'behind'], ['pusher', 'activity', 'push', 1, 'ok']]);
    assert.ok(Date.now() - Date.parse(out.streams[1]?.last_pushed_at ?? '') < 60_000);
    assert.deepEqual(out.check.breaches.map((b) => [b.partner, b.stream, b.state, b.detail]), [['pusher', 'customers', 'behind', 'nothing pushed for 7m (target 5m)']]);
  });
});
