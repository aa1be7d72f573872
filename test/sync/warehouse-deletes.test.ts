/**
 * A warehouse view's soft-delete columns (a stream's `soft_delete`, docs/loading.md, Deletes)
 * against a real MariaDB and PostgreSQL warehouse, on every store: the example definition
 * (config/partners/warehouse-casino.yaml) with a `deleted_at` date-time on its players' view and
 * an `is_deleted` flag on its payments' view. A payment flagged on a later modified day, re-read by
 * the stream's late days, deletes its transaction; a player given a `deleted_at` deletes the
 * customer with its payments; the CPA follows (figures by hand: 100 USD a first deposit, clawed
 * back when the customer is left without one, kept when a later deposit becomes the first); a
 * re-read changes nothing, and recompute agrees. The warehouse reads closed days by its own clock,
 * so the rows are dated by the days before the machine's today, as the store's clock is.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPartner } from '../../jobs/run-partner.js';
import { utcDay } from '../../jobs/windows.js';
import { recompute } from '../../src/commission/recompute.js';
import type { PartnerDefinition } from '../../src/config/definition.js';
import { loadDefinition } from '../../src/config/load-definitions.js';
import { addDays } from '../../src/kernel/dates.js';
import { money } from '../../src/kernel/money.js';
import { noRedaction, silentLogger } from '../../src/log.js';
import { packageRoot } from '../../src/paths.js';
import { listTombstones } from '../../src/store/tombstones.js';
import { loaderWithEveryJob } from '../support/loader.js';
import { CPA, planWith, plansFrom, plansYaml } from '../support/plans.js';
import { STORES, type TestStore } from '../support/stores.js';
import { SERVER_DATABASES, type TestDatabase } from '../sql/databases.js';

const PARTNER = 'warehouse-casino';
const PLANS = plansFrom(plansYaml(planWith(CPA, { partner: PARTNER })));

/** The warehouse's tables and the example's two views over them, with their soft-delete columns. */
async function warehouse(db: TestDatabase): Promise<void> {
  const dt = db.client === 'mysql' ? 'DATETIME(6)' : 'timestamp(6)';
  await db.exec(`CREATE TABLE dim_player (player_id VARCHAR(32) NOT NULL PRIMARY KEY, registered_at ${dt} NOT NULL, affiliate_code VARCHAR(32) NOT NULL,
    country CHAR(2), updated_at ${dt} NOT NULL, deleted_at ${dt} NULL)`);
  await db.exec(`CREATE TABLE fact_payment (payment_id VARCHAR(32) NOT NULL PRIMARY KEY, player_id VARCHAR(32) NOT NULL, payment_type VARCHAR(8) NOT NULL,
    amount_cents INTEGER NOT NULL, currency CHAR(3) NOT NULL, created_at ${dt} NOT NULL, status VARCHAR(16) NOT NULL, updated_at ${dt} NOT NULL,
    is_deleted BOOLEAN NOT NULL DEFAULT FALSE)`);
  await db.exec(`CREATE VIEW dw_players AS SELECT player_id, registered_at, affiliate_code, country, updated_at, deleted_at,
    CAST(updated_at AS DATE) AS modified_day FROM dim_player`);
  await db.exec(`CREATE VIEW dw_payments AS SELECT payment_id, player_id, payment_type, amount_cents / 100.0 AS amount, currency, created_at, status, updated_at,
    is_deleted, CAST(updated_at AS DATE) AS modified_day FROM fact_payment`);
}

/**
 * The example definition on this warehouse, its first run from `start`, soft-delete columns on
 * both streams, without its activity stream. `explicit`: the payments' mapping names every column
 * it reads (passthrough off), so the view is read by a select list rather than `*`.
 */
async function definition(db: TestDatabase, dir: string, start: string, explicit: boolean): Promise<PartnerDefinition> {
  mkdirSync(join(dir, 'partners'), { recursive: true });
  let yaml = readFileSync(join(packageRoot(), 'config', 'partners', `${PARTNER}.yaml`), 'utf8')
    .replace(/^(\s+)client: sqlite\b.*$/m, `$1client: ${db.client}`)
    .replace(/^(\s+)# start: .*$/m, `$1start: ${start}`)
    .replace(/^(\s+)view: dw_players$/m, '$1view: dw_players\n$1soft_delete: { column: deleted_at }')
    .replace(/^(\s+)view: dw_payments$/m, '$1view: dw_payments\n$1soft_delete: { column: is_deleted }');
  if (explicit) {
    yaml = yaml.replace(/^(\s+)transaction_date: created_at$/m, '$1transaction_date: created_at\n$1currency: currency\n$1status: status')
      .replace(/^(\s+)fields:\n(\s+)transaction_id: payment_id$/m, '$1passthrough: false\n$1fields:\n$2transaction_id: payment_id');
  }
  const file = join(dir, 'partners', `${PARTNER}.yaml`);
  writeFileSync(file, yaml);
  const loaded = await loadDefinition(file, { ...process.env, WAREHOUSE_CASINO_URL: db.url });
  if (!loaded.definition) throw new Error(JSON.stringify(loaded.errors));
  delete loaded.definition.streams.activity;
  if (explicit) assert.equal(loaded.definition.streams.transactions?.mapping.passthrough, false);
  return loaded.definition;
}

for (const source of SERVER_DATABASES) {
  for (const backend of STORES) {
    describe(`soft-delete columns of a real ${source.client === 'mysql' ? 'MariaDB' : 'PostgreSQL'} warehouse (${backend.name} store)`, function () {
      this.timeout(120_000);
      let db: TestDatabase;
      let t: TestStore;
      let dir: string;
      beforeEach(async () => {
        db = await source.create();
        t = await backend.create();
        dir = mkdtempSync(join(tmpdir(), 'partner-sync-warehouse-deletes-'));
      });
      afterEach(async () => {
        await db?.drop();
        await t?.drop();
        rmSync(dir, { recursive: true, force: true });
      });

      for (const explicit of [false, true]) {
        it(`a flagged payment and a player's deleted_at delete their records, the CPA follows${explicit ? ' (payments read by a select list)' : ''}`, async () => {
          await warehouse(db);
          // Closed days by the machine's clock, as the warehouse's own: the first run reads from d3 to yesterday.
          const today = utcDay(new Date());
          const [d3, d2, d1] = [-3, -2, -1].map((n) => addDays(today, n)) as [string, string, string];
          const players: [string, string][] = [['W1', 'aff-1'], ['W2', 'aff-1'], ['W3', 'aff-2'], ['W4', 'aff-2']];
          for (const [id, affiliate] of players) await db.exec('INSERT INTO dim_player VALUES (?, ?, ?, ?, ?, ?)', [id, `${d3} 09:00:00`, affiliate, 'GB', `${d3} 09:00:00`, null]);
          const payments: [string, string, number, string][] = [
            ['PAY-1', 'W1', 5000, `${d3} 10:00:00`],
            ['PAY-2a', 'W2', 3000, `${d3} 10:00:00`],
            ['PAY-2b', 'W2', 4000, `${d2} 10:00:00`],
            ['PAY-3', 'W3', 2000, `${d3} 11:00:00`],
            ['PAY-4', 'W4', 2500, `${d2} 11:00:00`],
          ];
          for (const [id, player, cents, at] of payments) {
            await db.exec('INSERT INTO fact_payment (payment_id, player_id, payment_type, amount_cents, currency, created_at, status, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [id, player, 'DEP', cents, 'USD', at, 'approved', at]);
          }
          const def = await definition(db, dir, d3, explicit);
          const loader = loaderWithEveryJob(t.store, { plans: PLANS });
          const run = async () => {
            const results = await runPartner({ loader, clock: t.store.clock, logger: silentLogger(), redact: noRedaction }, def, { kind: 'run', scheduledFor: new Date(t.store.clock()) });
            assert.ok(results.every((r) => r.status === 'succeeded'), JSON.stringify(results));
            return results;
          };
          const live = async (table: string, column: string) => ((await t.store.knex(table).where('partner_id', PARTNER).orderBy(column).select(column)) as Record<string, string>[]).map((r) => r[column]);
          const ledger = async () => ((await t.store.knex('commission_ledger').where('partner_id', PARTNER).orderBy('id').select('line_key', 'affiliate_id', 'reason', 'amount_usd')) as { line_key: string; affiliate_id: string; reason: string; amount_usd: unknown }[])
            .map((l) => [l.line_key, l.affiliate_id, l.reason, money(String(l.amount_usd)).toFixed(2)]);
          const perAffiliate = async () => {
            const sums = new Map<string, ReturnType<typeof money>>();
            for (const [, affiliate, , amount] of await ledger()) sums.set(affiliate as string, (sums.get(affiliate as string) ?? money(0)).plus(money(amount as string)));
            return Object.fromEntries([...sums].sort().map(([a, s]) => [a, s.toFixed(2)]));
          };
          const key = (c: string) => `cpa_ftd|cpa|${PARTNER}|${c}`;

          await run();
          assert.deepEqual(await live('customers', 'customer_id'), ['W1', 'W2', 'W3', 'W4']);
          assert.deepEqual(await live('transactions', 'transaction_id'), ['PAY-1', 'PAY-2a', 'PAY-2b', 'PAY-3', 'PAY-4']);
          // By hand: 100 USD for each player's first deposit.
          assert.deepEqual((await ledger()).sort(), ['W1', 'W2', 'W3', 'W4'].map((c) => [key(c), c < 'W3' ? 'aff-1' : 'aff-2', 'cpa_ftd', '100.00']).sort());
          assert.deepEqual(await perAffiliate(), { 'aff-1': '200.00', 'aff-2': '200.00' });

          // Yesterday the warehouse flagged two payments and deleted a player: the late days read them again.
          const changed = `${d1} 08:00:00`;
          await db.exec(`UPDATE fact_payment SET is_deleted = TRUE, updated_at = ? WHERE payment_id IN ('PAY-1', 'PAY-2a')`, [changed]);
          await db.exec('UPDATE dim_player SET deleted_at = ?, updated_at = ? WHERE player_id = ?', [changed, changed, 'W3']);
          const second = await run();
          assert.deepEqual(await live('customers', 'customer_id'), ['W1', 'W2', 'W4']);
          assert.deepEqual(await live('transactions', 'transaction_id'), ['PAY-2b', 'PAY-4']);
          assert.equal(second.find((r) => r.stream === 'transactions')?.counts.deleted, 2);
          assert.equal(second.find((r) => r.stream === 'customers')?.counts.deleted, 1);
          const stones = await listTombstones(t.store.knex, PARTNER);
          const w3 = stones.find((s) => s.entity === 'customers' && s.recordKey === 'W3');
          assert.deepEqual(stones.map((s) => [s.entity, s.recordKey, s.customerId, s.learnedVia, s.cascadeOf === null ? null : s.cascadeOf === w3?.id ? 'W3' : s.cascadeOf]).sort(), [
            ['customers', 'W3', 'W3', 'soft_delete', null],
            ['transactions', 'PAY-1', 'W1', 'soft_delete', null],
            ['transactions', 'PAY-2a', 'W2', 'soft_delete', null],
            ['transactions', 'PAY-3', 'W3', 'soft_delete', 'W3'],
          ]);
          // By hand: W1 has no deposit left (-100.00); W2's later deposit is its first now (its CPA stays);
          // W3 is gone with its deposit (-100.00); W4 untouched.
          const lines = await ledger();
          assert.deepEqual(lines.slice(4).sort(), [[key('W1'), 'aff-1', 'cpa_clawback_deleted', '-100.00'], [key('W3'), 'aff-2', 'cpa_clawback_deleted', '-100.00']]);
          assert.deepEqual(await perAffiliate(), { 'aff-1': '100.00', 'aff-2': '100.00' });
          const w2 = (await t.store.knex('transactions').where({ partner_id: PARTNER, customer_id: 'W2' }).select('amount_currency', 'status')) as { amount_currency: unknown; status: string }[];
          assert.deepEqual(w2.map((r) => [Number(r.amount_currency), r.status]), [[40, 'approved']]);

          // The next run reads the flagged rows again: already deleted, nothing moves.
          await run();
          assert.equal((await listTombstones(t.store.knex, PARTNER)).length, 4);
          assert.deepEqual(await ledger(), lines);
          const check = await recompute(t.store, PLANS, { runId: 'check' });
          assert.deepEqual(check.flatMap((r) => r.differences), []);
        });
      }
    });
  }
}
