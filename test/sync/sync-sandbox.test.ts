/**
 * End-to-end pulls: the example REST definitions against the sandbox partner over real HTTP,
 * into every store backend. The store must hold exactly what the partner has: nothing lost,
 * nothing twice, whatever the partner's API does.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { runPartner } from '../../jobs/run-partner.js';
import { unevaluated } from '../../src/store/unevaluated.js';
import { loadPlans } from '../../src/commission/load-plans.js';
import { loadFraudConfig } from '../../src/fraud/config.js';
import { packageRoot } from '../../src/paths.js';
import { rebuildFacts } from '../../src/reports/facts.js';
import { utcDay } from '../../jobs/windows.js';
import { addDays } from '../../src/kernel/dates.js';
import type { PartnerDefinition, RestSource, RestStream } from '../../src/config/definition.js';
import { createRedactor } from '../../src/config/redact.js';
import { createLogger, silentLogger } from '../../src/log.js';
import { readState } from '../../src/store/sync-state.js';
import type { Entity, Variant } from '../../src/types.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { everyJob, loaderWith, waitingFor } from '../support/loader.js';
import { SANDBOX_SECRET, byKey, exampleDefinition, storedByKey } from '../support/sandbox.js';
import { STORES, type TestStore } from '../support/stores.js';

const ENTITIES: Entity[] = ['customers', 'transactions', 'activity'];

for (const backend of STORES) {
  describe(`pull sync from the sandbox partner on ${backend.name}`, function () {
    this.timeout(60_000);
    let t: TestStore;
    let sandbox: Sandbox;
    let def: PartnerDefinition;
    let cleanup: () => void;
    const variant: Variant = 'igaming';

    beforeEach(async () => {
      t = await backend.create();
      sandbox = await startSandbox({ port: 0, seed: 7, customers: 30, clients: [{ client_id: 'sandbox-client', client_secret: SANDBOX_SECRET }] });
      ({ def, cleanup } = await exampleDefinition(variant, sandbox.url));
      // First runs start at the beginning of the partner's data; small pages make many pages.
      for (const entity of ENTITIES) {
        const stream = def.streams[entity];
        if (!stream) continue;
        stream.incremental.start = `${sandbox.data.from}T00:00:00Z`;
        (stream as RestStream).pagination.per_page = 50;
      }
      (def.source as RestSource).retries = { max: 6, min_delay_ms: 5, max_delay_ms: 40, max_retry_after_ms: 2000 };
    });
    afterEach(async () => {
      await sandbox.close();
      cleanup();
      await t.drop();
    });

    const run = (only?: Entity, logger = silentLogger()) =>
      runPartner({ loader: loaderWith(t.store, []), clock: t.store.clock, logger, redact: createRedactor(def.secrets) },
        def, { kind: 'run', scheduledFor: new Date() }, only);

    async function assertStoreEqualsPartner(entities: Entity[] = ENTITIES): Promise<void> {
      for (const entity of entities) {
        const expected = entity === 'activity' ? byKey(variant, entity, sandbox.data.activity(variant)) : byKey(variant, entity, entity === 'customers' ? sandbox.data.customers(variant) : sandbox.data.transactions(variant));
        const stored = await storedByKey(t.store, def.partner, variant, entity);
        assert.equal(stored.size, expected.size, `${entity}: ${stored.size} stored, the partner has ${expected.size}`);
        assert.deepEqual(stored, expected, `${entity} differ`);
      }
    }

    it('a first run loads every record the partner has, each once', async () => {
      const results = await run();
      assert.deepEqual(results.map((r) => [r.stream, r.status]), [['customers', 'succeeded'], ['transactions', 'succeeded'], ['activity', 'succeeded']]);
      assert.ok(results.every((r) => r.counts.rejected === 0 && r.counts.waiting === 0), JSON.stringify(results.map((r) => r.counts)));
      await assertStoreEqualsPartner();
      const state = (await readState(t.store.knex, def.partner, 'activity')) as { last_day: string };
      assert.equal(state.last_day, addDays(utcDay(new Date()), -1));
    });

    it('a second run with nothing changed leaves the store identical and moves the watermark', async () => {
      await run();
      const before = (await readState(t.store.knex, def.partner, 'customers')) as { watermark: string };
      const snapshot = await Promise.all(ENTITIES.map((e) => storedByKey(t.store, def.partner, variant, e)));
      const second = await run();
      assert.ok(second.every((r) => r.status === 'succeeded'));
      assert.deepEqual(await Promise.all(ENTITIES.map((e) => storedByKey(t.store, def.partner, variant, e))), snapshot);
      const after = (await readState(t.store.knex, def.partner, 'customers')) as { watermark: string };
      assert.ok(after.watermark > before.watermark, `${after.watermark} > ${before.watermark}`);
    });

    it('records changed with the same cursor value as the watermark, or the last value seen, are not lost', async () => {
      // The newest change at the partner, a minute ago, at microsecond precision.
      const lastSeen = new Date(Date.now() - 60_000).toISOString().replace('Z', '123Z');
      sandbox.data.upsertCustomer(variant, { customer_id: 'edge-0', signup_date: '2026-01-01T00:00:00Z', affiliate_id: 'aff-101' }, lastSeen);
      await run();
      const state = (await readState(t.store.knex, def.partner, 'customers')) as { watermark: string; max_cursor: string };
      assert.equal(state.max_cursor, lastSeen, 'the cursor is kept exactly as the source wrote it');
      // Late commits at the partner, stamped with exactly the values the first run ended on.
      sandbox.data.upsertCustomer(variant, { customer_id: 'late-1', signup_date: '2026-01-01T00:00:00Z', affiliate_id: 'aff-101' }, lastSeen);
      sandbox.data.upsertCustomer(variant, { customer_id: 'late-2', signup_date: '2026-01-01T00:00:00Z', affiliate_id: 'aff-101' }, state.watermark);
      await run('customers');
      const stored = await storedByKey(t.store, def.partner, variant, 'customers');
      assert.ok(stored.has('late-1') && stored.has('late-2'));
      await assertStoreEqualsPartner(['customers']);
    });

    it('a transaction whose status changes at the source (approved → reversed) is updated in the store', async () => {
      await run();
      const approved = sandbox.data.transactions(variant).find((r) => r.status === 'approved');
      assert.ok(approved);
      sandbox.data.setTransactionStatus(variant, approved.transaction_id as string, 'reversed', new Date(Date.now() - 1000));
      await run('transactions');
      const stored = await storedByKey(t.store, def.partner, variant, 'transactions');
      assert.equal(stored.get(approved.transaction_id as string)?.status, 'reversed');
      await assertStoreEqualsPartner(['transactions']);
    });

    it('a day re-aggregated at the source replaces the stored day: a vanished row vanishes', async () => {
      await run();
      const yesterday = addDays(utcDay(new Date()), -1);
      const rows = sandbox.data.activity(variant, yesterday);
      assert.ok(rows.length >= 2, 'the sandbox has activity yesterday');
      const [gone, changed] = rows as [Record<string, unknown>, Record<string, unknown>];
      sandbox.data.deleteActivity(variant, { date: yesterday, customer_id: gone.customer_id as string, game_type: gone.game_type as string, currency: gone.currency as string });
      sandbox.data.putActivity(variant, { ...changed, total_bets: 1234.5, wins: 1000, ggr: 234.5, ngr: 200 });
      await run('activity');
      await assertStoreEqualsPartner(['activity']);
    });

    it('backfill twice is the same as once, and does not move incremental state', async () => {
      const from = sandbox.data.from;
      const to = addDays(from, 9);
      const backfill = () => runPartner({ loader: loaderWith(t.store, []), clock: t.store.clock, logger: silentLogger(), redact: createRedactor(def.secrets) },
        def, { kind: 'backfill', from, to });
      const first = await backfill();
      assert.ok(first.every((r) => r.status === 'succeeded'), JSON.stringify(first));
      const snapshot = await Promise.all(ENTITIES.map((e) => storedByKey(t.store, def.partner, variant, e)));
      const activity = snapshot[2] as Map<string, Record<string, unknown>>;
      assert.ok(activity.size > 0 && [...activity.values()].every((r) => (r.date as string) >= from && (r.date as string) <= to));
      await backfill();
      assert.deepEqual(await Promise.all(ENTITIES.map((e) => storedByKey(t.store, def.partner, variant, e))), snapshot);
      for (const e of ENTITIES) assert.equal(await readState(t.store.knex, def.partner, e), undefined);
    });

    it('partner faults (5xx, 429s, duplicates across pages, short-lived tokens) still give exactly the partner data', async () => {
      Object.assign(sandbox.faults, { errorRate: 0.15, throttleEvery: 9, throttleRetryAfter: 0, duplicateAcrossPages: true, tokenTtlSeconds: 1 });
      const results = await run();
      assert.ok(results.every((r) => r.status === 'succeeded'), JSON.stringify(results));
      assert.ok(results.reduce((n, r) => n + r.counts.retries, 0) > 0, 'some requests were retried');
      assert.ok(results.reduce((n, r) => n + r.counts.throttled, 0) > 0, 'some requests were throttled');
      await assertStoreEqualsPartner();
    });

    it('a failing stream does not advance its cursor; the other streams go on', async () => {
      (def.streams.transactions as { path: string }).path = '/api/v1/igaming/no-such-list';
      const results = await run();
      assert.deepEqual(results.map((r) => [r.stream, r.status]), [['customers', 'succeeded'], ['transactions', 'failed'], ['activity', 'succeeded']]);
      assert.match(results[1]?.error ?? '', /404/);
      assert.equal(await readState(t.store.knex, def.partner, 'transactions'), undefined);
      await assertStoreEqualsPartner(['customers', 'activity']);
    });

    it('a first run settles its three streams together at its end: one evaluation, after all of them, and report facts equal to a rebuild', async () => {
      const plans = (await loadPlans(join(packageRoot(), 'config', 'commissions.yaml'))).plans;
      const fraud = (await loadFraudConfig(join(packageRoot(), 'config', 'fraud.yaml'))).config;
      const rows = async () => Promise.all(ENTITIES.map(async (e) => (await storedByKey(t.store, def.partner, variant, e)).size));
      const settled: { partner: string; rows: number[]; pendingDays: number }[] = [];
      // A first evaluation every job's waits for: what the settle finds before any job evaluates.
      const loader = loaderWith(t.store, waitingFor({
        name: 'spy',
        evaluate: async ({ change }) => {
          const [waiting] = await unevaluated(t.store.knex, new Date(), change.partner);
          settled.push({ partner: change.partner, rows: await rows(), pendingDays: waiting?.report_days ?? 0 });
        },
      }, everyJob(t.store, { plans, fraud })));
      const results = await runPartner({ loader, clock: t.store.clock, logger: silentLogger(), redact: createRedactor(def.secrets) }, def, { kind: 'run', scheduledFor: new Date() });
      assert.deepEqual(results.map((r) => r.status), ['succeeded', 'succeeded', 'succeeded']);
      const loaded = await rows();
      assert.ok(loaded.every((n) => n > 0), JSON.stringify(loaded));
      // One settle for the partner, once all three streams had loaded, with the report facts of their days waiting for it.
      assert.equal(settled.length, 1, JSON.stringify(settled));
      assert.deepEqual(settled[0]?.rows, loaded);
      assert.ok((settled[0]?.pendingDays ?? 0) > 0);
      assert.deepEqual(await unevaluated(t.store.knex, new Date()), []);
      const facts = async () => {
        const out: Record<string, string[]> = {};
        for (const table of ['report_ftd', 'report_cells', 'report_month_cells', 'report_depositors']) {
          out[table] = ((await t.store.knex(table).where('partner_id', def.partner).select('*')) as Record<string, unknown>[]).map((r) => JSON.stringify(r, (_k, v: unknown) => (v instanceof Date ? v.toISOString() : v))).sort();
        }
        return out;
      };
      const kept = await facts();
      assert.ok((kept.report_cells?.length ?? 0) > 0 && (kept.report_ftd?.length ?? 0) > 0, 'the run gave report facts');
      await rebuildFacts(t.store, def.partner, variant);
      assert.deepEqual(kept, await facts());
    });

    it('no secret reaches a log line or an error, even when auth fails', async () => {
      const lines: string[] = [];
      const stream = new (await import('node:stream')).Writable({ write(chunk: Buffer, _enc, done) { lines.push(chunk.toString()); done(); } });
      const logger = createLogger({ stream, json: true, level: 'debug', redact: createRedactor(def.secrets) });
      await run('customers', logger);
      ((def.source as RestSource).auth as { client_secret: string }).client_secret = `${SANDBOX_SECRET}-wrong`;
      def.secrets.push(`${SANDBOX_SECRET}-wrong`);
      const failed = await runPartner({ loader: loaderWith(t.store, []), clock: t.store.clock, logger, redact: createRedactor(def.secrets) },
        def, { kind: 'run', scheduledFor: new Date() }, 'customers');
      assert.equal(failed[0]?.status, 'failed');
      assert.ok(lines.length > 3);
      const all = lines.join('\n') + JSON.stringify(failed);
      assert.ok(!all.includes(SANDBOX_SECRET), 'the client secret leaked');
      assert.ok(!/Bearer [A-Za-z0-9._~+/-]{8,}/.test(all), 'an access token leaked');
    });
  });
}
