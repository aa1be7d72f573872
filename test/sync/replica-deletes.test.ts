/**
 * A replica's soft-delete columns (a stream's `soft_delete`, docs/loading.md, Deletes) against a
 * real MariaDB and PostgreSQL replica, on every store: a payment flagged `is_deleted` and an
 * account given a `deleted_at`, read by the cursor like any change, delete their records (the
 * account with its payments), the challenge CPA follows (figures by hand), a re-read changes
 * nothing, and a row flagged back loads again and books once. The replica's rows are stamped by
 * its own clock, which the runs' windows follow (as in replica-sync.test.ts).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recompute } from '../../src/commission/recompute.js';
import { inferDeletes } from '../../jobs/infer-deletes.js';
import { runPartner } from '../../jobs/run-partner.js';
import { reconcile } from '../../src/onboarding/reconcile.js';
import { affiliateReport } from '../../src/reports/affiliates.js';
import { addDays } from '../../src/kernel/dates.js';
import { utcDay } from '../../jobs/windows.js';
import type { PartnerDefinition } from '../../src/config/definition.js';
import { loadDefinition } from '../../src/config/load-definitions.js';
import { money } from '../../src/kernel/money.js';
import { noRedaction, silentLogger } from '../../src/log.js';
import { packageRoot } from '../../src/paths.js';
import { listTombstones } from '../../src/store/tombstones.js';
import { loaderWithEveryJob } from '../support/loader.js';
import { CHALLENGE_FEES, planWith, plansFrom, plansYaml } from '../support/plans.js';
import { mariadb, postgres, seed, type Replica } from '../support/replica.js';
import { STORES, type TestStore } from '../support/stores.js';

const PLANS = plansFrom(plansYaml(planWith(CHALLENGE_FEES, { partner: 'replica-prop' })));

/** The example definition with soft-delete columns on customers (deleted_at) and transactions (is_deleted), without its activity stream. */
async function definition(replica: Replica, dir: string): Promise<PartnerDefinition> {
  mkdirSync(join(dir, 'partners'), { recursive: true });
  const yaml = readFileSync(join(packageRoot(), 'config', 'partners', 'replica-prop.yaml'), 'utf8')
    .replace(/^(\s+)client: sqlite\b/m, `$1client: ${replica.client}`)
    .replace(/^(\s+)lookback: (\S+).*$/gm, `$1lookback: $2\n$1start: ${addDays(utcDay(new Date()), -10)}T00:00:00Z`)
    .replace(/^(\s+)tiebreak_column: account_id.*$/m, '$1tiebreak_column: account_id\n$1soft_delete: { column: deleted_at }')
    .replace(/^(\s+)tiebreak_column: payment_id.*$/m, '$1tiebreak_column: payment_id\n$1soft_delete: { column: is_deleted }')
    .replace('p.paid_at, p.state, p.updated_at', 'p.paid_at, p.state, p.updated_at, p.is_deleted');
  const file = join(dir, 'partners', 'replica-prop.yaml');
  writeFileSync(file, yaml);
  const loaded = await loadDefinition(file, { ...process.env, REPLICA_PROP_URL: replica.url });
  if (!loaded.definition) throw new Error(JSON.stringify(loaded.errors));
  delete loaded.definition.streams.activity;
  return loaded.definition;
}

for (const make of [mariadb, postgres]) {
  for (const backend of STORES) {
    describe(`soft-delete columns of a real ${make === mariadb ? 'MariaDB' : 'PostgreSQL'} replica (${backend.name} store)`, function () {
      this.timeout(120_000);
      let replica: Replica;
      let t: TestStore;
      let dir: string;
      beforeEach(async () => {
        replica = await make();
        t = await backend.create();
        dir = mkdtempSync(join(tmpdir(), 'partner-sync-soft-delete-'));
      });
      afterEach(async () => {
        await replica?.drop();
        await t?.drop();
        rmSync(dir, { recursive: true, force: true });
      });

      it('deleted_at and is_deleted rows delete their records, the challenge CPA follows; flagged back, a payment books once more', async () => {
        await seed(replica, 3);
        const dt = replica.client === 'mysql' ? 'DATETIME(6)' : 'timestamp(6)';
        await replica.exec(`ALTER TABLE accounts ADD COLUMN deleted_at ${dt} NULL`);
        await replica.exec('ALTER TABLE payments ADD COLUMN is_deleted BOOLEAN NOT NULL DEFAULT FALSE');
        const def = await definition(replica, dir);
        const loader = loaderWithEveryJob(t.store, { plans: PLANS });
        const run = async () => {
          const results = await runPartner({ loader, clock: t.store.clock, logger: silentLogger(), redact: noRedaction }, def, { kind: 'run', scheduledFor: new Date(t.store.clock()) });
          assert.ok(results.every((r) => r.status === 'succeeded'), JSON.stringify(results));
        };
        const net = async (fee: string) => ((await t.store.knex('commission_ledger').where('line_key', `challenge_cpa|fees|replica-prop|${fee}`).select('amount_usd')) as { amount_usd: unknown }[])
          .reduce((s, l) => s.plus(money(String(l.amount_usd))), money(0)).toFixed(2);
        const live = async (table: string, column: string) => ((await t.store.knex(table).where('partner_id', 'replica-prop').orderBy(column).select(column)) as Record<string, string>[]).map((r) => r[column]);

        await run();
        // By hand: 10% of each 549.00 challenge fee.
        for (const fee of ['P1', 'P2', 'P3']) assert.equal(await net(fee), '54.90');

        const minuteAgo = await replica.nowPlus(-60);
        await replica.exec('UPDATE payments SET is_deleted = TRUE, updated_at = ? WHERE payment_id = ?', [minuteAgo, 'P2']);
        await replica.exec('UPDATE accounts SET deleted_at = ?, updated_at = ? WHERE account_id = ?', [minuteAgo, minuteAgo, 'A00003']);
        await run();
        assert.deepEqual(await live('customers', 'customer_id'), ['A00001', 'A00002']);
        assert.deepEqual(await live('transactions', 'transaction_id'), ['P1']);
        const stones = await listTombstones(t.store.knex, 'replica-prop');
        assert.deepEqual(stones.map((s) => [s.entity, s.recordKey, s.learnedVia, s.cascadeOf === null ? null : 'customer']).sort(),
          [['customers', 'A00003', 'soft_delete', null], ['transactions', 'P2', 'soft_delete', null], ['transactions', 'P3', 'soft_delete', 'customer']]);
        assert.deepEqual([await net('P1'), await net('P2'), await net('P3')], ['54.90', '0.00', '0.00']);

        // The lookback reads the deleted rows again: already deleted, nothing moves.
        const lines = Number(((await t.store.knex('commission_ledger').count({ n: '*' })) as { n: unknown }[])[0]?.n);
        await run();
        assert.equal((await listTombstones(t.store.knex, 'replica-prop')).length, 3);
        assert.equal(Number(((await t.store.knex('commission_ledger').count({ n: '*' })) as { n: unknown }[])[0]?.n), lines);

        // Flagged back: a new version, booked once.
        await replica.exec('UPDATE payments SET is_deleted = FALSE, updated_at = ? WHERE payment_id = ?', [await replica.nowPlus(-30), 'P2']);
        await run();
        await run();
        assert.deepEqual(await live('transactions', 'transaction_id'), ['P1', 'P2']);
        assert.equal(await net('P2'), '54.90');
        assert.deepEqual(((await t.store.knex('commission_ledger').where('line_key', 'challenge_cpa|fees|replica-prop|P2').orderBy('id').select('amount_usd')) as { amount_usd: unknown }[]).map((l) => money(String(l.amount_usd)).toFixed(2)),
          ['54.90', '-54.90', '54.90']);
        const results = await recompute(t.store, PLANS, { runId: 'check' });
        assert.deepEqual(results.flatMap((r) => r.differences), []);
      });

      it('a payment hard-deleted at the replica is deleted after two reconcile scans agree, not one; re-created, it books once more', async () => {
        await seed(replica, 3);
        await replica.exec(`ALTER TABLE accounts ADD COLUMN deleted_at ${replica.client === 'mysql' ? 'DATETIME(6)' : 'timestamp(6)'} NULL`);
        await replica.exec('ALTER TABLE payments ADD COLUMN is_deleted BOOLEAN NOT NULL DEFAULT FALSE');
        const def = await definition(replica, dir);
        const loader = loaderWithEveryJob(t.store, { plans: PLANS });
        const deps = { loader, clock: t.store.clock, logger: silentLogger(), redact: noRedaction };
        const run = async () => {
          const results = await runPartner(deps, def, { kind: 'run', scheduledFor: new Date(t.store.clock()) });
          assert.ok(results.every((r) => r.status === 'succeeded'), JSON.stringify(results));
        };
        await run();
        const fee = async (id: string) => ((await t.store.knex('commission_ledger').where('line_key', `challenge_cpa|fees|replica-prop|${id}`).select('amount_usd')) as { amount_usd: unknown }[])
          .reduce((s, l) => s.plus(money(String(l.amount_usd))), money(0)).toFixed(2);
        // The affiliate report's challenge purchases and fees over every affiliate (the seeded payments are of January 2026).
        const report = async () => {
          const rows = (await affiliateReport(t.store, { partner: 'replica-prop' }, 'month')).rows.filter((r) => r.month === '2026-01');
          return [rows.reduce((n, r) => n + r.challenge_purchases, 0), rows.reduce((s, r) => s.plus(money(r.challenge_fees_usd)), money(0)).toFixed(2)];
        };
        assert.deepEqual(await report(), [3, '1647.00']);
        // The seeded payments are paid on 2026-01-05 (the replica's UTC).
        const scan = async () => inferDeletes(loader, def, await reconcile({ store: t.store, clock: t.store.clock, logger: silentLogger(), redact: noRedaction }, def, '2026-01-05', '2026-01-05', 'transactions', { sample: 0, seed: 1 }));
        assert.deepEqual((await scan()).streams.map((s) => [s.entity, s.missing]), [['transactions', 0]]);
        await replica.exec('DELETE FROM payments WHERE payment_id = ?', ['P2']);
        const first = await scan();
        assert.deepEqual(first.streams.map((s) => [s.missing, s.firstSeen, s.deleted]), [[1, 1, 0]]);
        assert.equal(await fee('P2'), '54.90', 'one scan deletes nothing');
        const second = await scan();
        assert.deepEqual(second.streams.map((s) => [s.missing, s.firstSeen, s.deleted]), [[1, 0, 1]]);
        assert.equal(await fee('P2'), '0.00');
        assert.deepEqual(await report(), [2, '1098.00'], 'the report loses exactly the deleted fee');
        assert.deepEqual((await listTombstones(t.store.knex, 'replica-prop')).map((x) => [x.recordKey, x.learnedVia]), [['P2', 'reconcile']]);
        assert.deepEqual((await scan()).streams.map((s) => [s.missing, s.deleted]), [[0, 0]], 'the store now agrees with the source');
        // Re-created at the source: a new version, its challenge CPA booked once more.
        await replica.exec('INSERT INTO payments VALUES (?, ?, ?, ?, ?, ?, ?, ?, FALSE)', ['P2', 'A00002', 'CHALLENGE', 54900, 'USD', '2026-01-05 09:05:00', 'approved', await replica.nowPlus(-30)]);
        await run();
        assert.equal(await fee('P2'), '54.90');
        for (const id of ['P1', 'P3']) assert.equal(await fee(id), '54.90');
        assert.deepEqual(await report(), [3, '1647.00']);
        const results = await recompute(t.store, PLANS, { runId: 'check' });
        assert.deepEqual(results.flatMap((r) => r.differences), []);
      });
    });
  }
}
