/**
 * A daily day replacement does not trust whatever the source answers: an empty or much smaller
 * answer for a stored day, rows dated outside the requested days, an empty page that still
 * carries a next cursor, an empty day at the 00:15 run. Real pulls from the sandbox partner (and
 * nock for a partner whose pagination is broken) into every store backend.
 */
import assert from 'node:assert/strict';
import nock from 'nock';
import { runPartner } from '../../jobs/run-partner.js';
import type { SyncPlan } from '../../jobs/sync-stream.js';
import { utcDay } from '../../jobs/windows.js';
import { addDays } from '../../src/kernel/dates.js';
import type { PartnerDefinition, RestSource, RestStream } from '../../src/config/definition.js';
import { createRedactor } from '../../src/config/redact.js';
import { silentLogger } from '../../src/log.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { listRejects } from '../../src/store/rejects.js';
import { readState } from '../../src/store/sync-state.js';
import type { Entity } from '../../src/types.js';
import { loaderWith } from '../support/loader.js';
import { customer, gaming, raw } from '../support/records.js';
import { SANDBOX_SECRET, exampleDefinition, storedByKey } from '../support/sandbox.js';
import { STORES, type TestStore } from '../support/stores.js';

const ADVICE = "If the partner's day really shrank or is empty, accept it with --allow-shrink (run, backfill) or max_day_shrink in the definition";

/** A plan that accepts shrinking days (`--allow-shrink`); typed loosely so the same test compiles against a build without the option. */
const allowing = (plan: SyncPlan): SyncPlan => ({ ...plan, allowShrink: true } as unknown as SyncPlan);

for (const backend of STORES) {
  describe(`day replacement guards on ${backend.name}`, function () {
    this.timeout(60_000);
    let t: TestStore;
    let sandbox: Sandbox;
    let def: PartnerDefinition;
    let cleanup: () => void;
    const D = addDays(utcDay(new Date()), -1);

    beforeEach(async () => {
      t = await backend.create();
      sandbox = await startSandbox({ port: 0, seed: 7, customers: 30, clients: [{ client_id: 'sandbox-client', client_secret: SANDBOX_SECRET }] });
      ({ def, cleanup } = await exampleDefinition('igaming', sandbox.url));
      for (const entity of ['customers', 'transactions'] as const) def.streams[entity]!.incremental.start = `${sandbox.data.from}T00:00:00Z`;
      (def.streams.activity as RestStream).pagination.per_page = 50;
      (def.source as RestSource).retries = { max: 2, min_delay_ms: 5, max_delay_ms: 10, max_retry_after_ms: 100 };
    });
    afterEach(async () => {
      await sandbox.close();
      cleanup();
      await t.drop();
    });

    /** Runs whose writes committed (the commission job runs after each such commit). */
    let committedRuns: string[] = [];
    const run = (only?: Entity, plan: SyncPlan = { kind: 'run', scheduledFor: new Date() }) => {
      const loader = loaderWith(t.store, [{ name: 'spy', mark: async ({ trx }, c) => { trx.executionPromise.then(() => committedRuns.push(c.runId), () => undefined); } }]);
      return runPartner({ loader, clock: t.store.clock, logger: silentLogger(), redact: createRedactor(def.secrets) }, def, plan, only);
    };
    const activityOf = async (day: string) => [...(await storedByKey(t.store, def.partner, 'igaming', 'activity')).keys()].filter((k) => k.startsWith(day));
    const removeAtPartner = (day: string, count: number) => {
      for (const row of sandbox.data.activity('igaming', day).slice(0, count)) {
        sandbox.data.deleteActivity('igaming', { date: day, customer_id: row.customer_id as string, game_type: row.game_type as string, currency: row.currency as string });
      }
    };

    it('an empty answer for a stored day replaces nothing: the run fails naming the day, the rows stored and received', async () => {
      await run();
      const stored = await activityOf(D);
      assert.ok(stored.length >= 2, `the sandbox has activity on ${D}`);
      removeAtPartner(D, Infinity);
      const [result] = await run('activity');
      assert.equal(result?.status, 'failed');
      assert.equal(result?.error, `day replacement refused, nothing replaced: ${D}: ${stored.length} rows stored, 0 received: the day would become empty. ${ADVICE}`);
      assert.deepEqual(await activityOf(D), stored);
      // a backfill is guarded the same way; --allow-shrink accepts the real shrink
      committedRuns = [];
      const [backfill] = await run('activity', { kind: 'backfill', from: D, to: D });
      assert.equal(backfill?.status, 'failed');
      assert.deepEqual(await activityOf(D), stored);
      // nothing committed, so the commission job did not re-evaluate (and reverse) the day's RevShare
      assert.deepEqual(committedRuns, []);
      const [accepted] = await run('activity', allowing({ kind: 'backfill', from: D, to: D }));
      assert.equal(accepted?.status, 'succeeded', accepted?.error);
      assert.deepEqual(await activityOf(D), []);
      assert.deepEqual(committedRuns, [accepted?.runId]);
    });

    it('a day losing more than max_day_shrink of its rows is not replaced; a smaller loss, or a wider limit, is', async () => {
      await run();
      const stored = await activityOf(D);
      assert.ok(stored.length >= 4, `the sandbox has ${stored.length} rows on ${D}`);
      const gone = Math.floor(stored.length / 2) + 1; // more than half
      removeAtPartner(D, gone);
      const left = stored.length - gone;
      const [refused] = await run('activity');
      assert.equal(refused?.status, 'failed');
      const share = Math.round((gone / stored.length) * 1000) / 10;
      assert.equal(refused?.error, `day replacement refused, nothing replaced: ${D}: ${stored.length} rows stored, ${left} received, ${left} would remain: the day would lose ${share}% of its rows (max_day_shrink 0.5). ${ADVICE}`);
      assert.equal((await activityOf(D)).length, stored.length);
      (def.streams.activity!.incremental as { max_day_shrink?: number }).max_day_shrink = 0.9;
      const [accepted] = await run('activity');
      assert.equal(accepted?.status, 'succeeded', accepted?.error);
      assert.equal((await activityOf(D)).length, left);
    });

    it('rows dated outside the requested days are rejects, and the window replaces nothing', async () => {
      await run();
      const before = await storedByKey(t.store, def.partner, 'igaming', 'activity');
      // A partner API that ignores the day asked for and always answers with D's rows.
      const stream = def.streams.activity as RestStream;
      (stream.incremental as { date_param?: string }).date_param = 'day';
      stream.params = { date: D };
      const answered = sandbox.data.activity('igaming', D).length;
      const [result] = await run('activity');
      assert.equal(result?.status, 'failed');
      const first = addDays(D, -2);
      assert.equal(result?.error, `day ${first} not replaced: ${answered} rows dated outside it (${D}); the source did not answer for the day asked; they are kept as rejects (field date, rule requestedDays)`);
      assert.deepEqual(await storedByKey(t.store, def.partner, 'igaming', 'activity'), before);
      assert.deepEqual([result?.counts.pulled, result?.counts.rejected, result?.counts.loaded], [answered, answered, 0]);
      const rejects = await listRejects(t.store.knex, { partner: def.partner, entity: 'activity' });
      assert.equal(rejects.length, answered);
      assert.deepEqual(rejects[0]?.errors, [{ field: 'date', rule: 'requestedDays', message: `date: "${D}" is outside the requested day ${first} (the source answered for another day; nothing of the window is replaced)` }]);
    });

    it('the run for a day the source answers nothing for does not record it as loaded; --allow-shrink does', async () => {
      removeAtPartner(D, Infinity);
      const results = await run();
      const activity = results.find((r) => r.stream === 'activity');
      assert.equal(activity?.status, 'failed');
      assert.equal(activity?.error, `day replacement refused, nothing replaced: ${D}: no rows stored, 0 received, none loadable: not recorded as loaded. ${ADVICE}`);
      const state = (await readState(t.store.knex, def.partner, 'activity')) as { last_day: string; days: Record<string, string> };
      assert.deepEqual(Object.keys(state.days).sort(), [addDays(D, -2), addDays(D, -1)]);
      assert.equal(state.last_day, addDays(D, -1));
      const [accepted] = await run('activity', allowing({ kind: 'run', scheduledFor: new Date() }));
      assert.equal(accepted?.status, 'succeeded', accepted?.error);
      const after = (await readState(t.store.knex, def.partner, 'activity')) as { last_day: string; days: Record<string, string> };
      assert.equal(after.last_day, D);
      assert.ok(after.days[D]);
    });
  });

  describe(`an empty page that still carries a next cursor, on ${backend.name}`, function () {
    this.timeout(60_000);
    const BASE = 'https://partner.example';
    let t: TestStore;
    let def: PartnerDefinition;
    let cleanup: () => void;
    const D = '2026-11-21';
    before(() => nock.disableNetConnect());
    after(() => nock.enableNetConnect());
    beforeEach(async () => {
      t = await backend.create();
      ({ def, cleanup } = await exampleDefinition('igaming', BASE));
      (def.source as RestSource).auth = { type: 'bearer', token: 'test-token' };
      (def.source as RestSource).retries = { max: 2, min_delay_ms: 5, max_delay_ms: 10, max_retry_after_ms: 100 };
    });
    afterEach(async () => {
      nock.cleanAll();
      cleanup();
      await t.drop();
    });

    const run = (only: Entity, plan: SyncPlan) =>
      runPartner({ loader: loaderWith(t.store, []), clock: t.store.clock, logger: silentLogger(), redact: createRedactor(def.secrets) }, def, plan, only);
    const rows = ['c1', 'c2', 'c3', 'c4'].map((c) => gaming(D, c, { total_bets: 10 }));

    it('fails the day after the retries: a day of 4 rows is not stored with 2', async () => {
      const loader = loaderWith(t.store, []);
      await loader.load({ partner: def.partner, variant: 'igaming', entity: 'customers', runId: 'setup', records: raw(['c1', 'c2', 'c3', 'c4'].map((c) => customer(c))) });
      const scope = nock(BASE)
        .get('/api/v1/igaming/activity').query({ date: D, per_page: '500' })
        .reply(200, { data: rows.slice(0, 2), meta: { next_cursor: 'p2' } })
        .get('/api/v1/igaming/activity').query({ date: D, per_page: '500', cursor: 'p2' })
        .times(3)
        .reply(200, { data: [], meta: { next_cursor: 'p3' } });
      const [result] = await run('activity', { kind: 'backfill', from: D, to: D });
      assert.equal(result?.status, 'failed');
      assert.match(result?.error ?? '', /an empty page still carries a next cursor at "meta\.next_cursor" \("p3"\).*\(gave up after 2 retries\)$/);
      assert.equal(result?.counts.retries, 2);
      assert.deepEqual([...(await storedByKey(t.store, def.partner, 'igaming', 'activity')).keys()], []);
      assert.ok(scope.isDone());
    });

    it('a cursor stream does not move its watermark past the pages it did not read', async () => {
      const scope = nock(BASE)
        .get('/api/v1/igaming/customers').query((q) => q.cursor === undefined)
        .reply(200, { data: [customer('c1'), customer('c2')], meta: { next_cursor: 'p2' } })
        .get('/api/v1/igaming/customers').query((q) => q.cursor === 'p2')
        .times(3)
        .reply(200, { data: [], meta: { next_cursor: 'p3' } });
      const [result] = await run('customers', { kind: 'run', scheduledFor: new Date() });
      assert.equal(result?.status, 'failed');
      // No watermark or start moved; the read position kept is the page not read, so the next run asks for it again.
      const state = (await readState(t.store.knex, def.partner, 'customers')) as { watermark?: string; start?: string; resume?: { after: string } } | undefined;
      assert.deepEqual([state?.watermark, state?.start, state?.resume?.after], [undefined, undefined, '{"cursor":"p2"}']);
      assert.ok(scope.isDone());
    });
  });
}
