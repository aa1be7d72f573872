/**
 * Volume, deletes at the source: the generated month of 5,000 customers (./support.ts) pulled from
 * the sandbox partner with every after-load job as shipped, then 1% of its transactions marked
 * deleted by the partner (the transactions stream's `soft_delete: { field: status, values:
 * [deleted] }`, docs/loading.md, Deletes) and pulled again. The store must then hold what a fresh
 * load of the month without those transactions holds (the same commands into another store, their
 * windows ending before the partner changed them): the same live rows, the same report facts day by day (and both
 * equal the truth computed from the generated records less the deleted ones), the same ledger per
 * key and per affiliate and plan once the clawbacks are counted, and `commissions recompute`
 * agreeing with each. Every command runs on a test clock, the morning after the month.
 */
import assert from 'node:assert/strict';
import { clockEnv } from '../../src/kernel/clock.js';
import { money } from '../../src/kernel/money.js';
import { affiliateReport } from '../../src/reports/affiliates.js';
import type { SandboxData } from '../../src/sandbox/data.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import type { Store } from '../../src/store/store.js';
import { listTombstones } from '../../src/store/tombstones.js';
import type { Variant } from '../../src/types.js';
import { runCli } from '../support/cli.js';
import { exampleCliConfig, type CliConfig } from '../support/cli-config.js';
import { SANDBOX_SECRET, storedByKey } from '../support/sandbox.js';
import { STORES, type TestStore } from '../support/stores.js';
import { DATA_CLOCK, MONTH, PARTNER, ratesCsv, shippedConfig, truth } from './support.js';

/** The month's load, the partner's deletes and the run that applies them. */
const LOADED_AT = '2026-11-01T13:00:00.000Z';
const DELETED_AT = Date.parse('2026-11-01T14:00:00.000Z');
const APPLIED_AT = '2026-11-01T15:00:00.000Z';

/** Net per ledger key and affiliate, keys owing nothing left out (a clawed-back CPA nets to nothing, as one never booked). */
async function ledgerNet(store: Store): Promise<[string, string][]> {
  const lines = (await store.knex('commission_ledger').where('partner_id', PARTNER).select('line_key', 'affiliate_id', 'amount_usd')) as { line_key: string; affiliate_id: string; amount_usd: unknown }[];
  const net = new Map<string, ReturnType<typeof money>>();
  for (const l of lines) net.set(`${l.line_key} ${l.affiliate_id}`, (net.get(`${l.line_key} ${l.affiliate_id}`) ?? money(0)).plus(money(String(l.amount_usd))));
  return [...net].filter(([, v]) => !v.isZero()).map(([k, v]): [string, string] => [k, v.toFixed(2)]).sort();
}

/** The ledger summed per affiliate and plan (a line key's second part names its plan). */
async function perAffiliatePlan(store: Store): Promise<Record<string, string>> {
  const lines = (await store.knex('commission_ledger').where('partner_id', PARTNER).select('line_key', 'affiliate_id', 'amount_usd')) as { line_key: string; affiliate_id: string; amount_usd: unknown }[];
  const sums = new Map<string, ReturnType<typeof money>>();
  for (const l of lines) {
    const group = `${l.affiliate_id} ${l.line_key.split('|')[1]}`;
    sums.set(group, (sums.get(group) ?? money(0)).plus(money(String(l.amount_usd))));
  }
  return Object.fromEntries([...sums].filter(([, v]) => !v.isZero()).sort().map(([k, v]) => [k, v.toFixed(2)]));
}

async function endState(store: Store) {
  const live = async (entity: 'customers' | 'transactions' | 'activity') => [...(await storedByKey(store, PARTNER, 'igaming', entity)).entries()].sort(([a], [b]) => a.localeCompare(b));
  return {
    customers: await live('customers'),
    transactions: await live('transactions'),
    activity: await live('activity'),
    report: (await affiliateReport(store, { partner: PARTNER }, 'day')).rows,
    ledger: await ledgerNet(store),
    byAffiliatePlan: await perAffiliatePlan(store),
  };
}

/** The generated month without these transactions, as ./support.ts's truth reads it. */
function without(data: SandboxData, deleted: ReadonlySet<string>): SandboxData {
  return { ...data, transactions: (variant: Variant) => data.transactions(variant).filter((t) => !deleted.has(String(t.transaction_id))) } as SandboxData;
}

/** The test on one store; one file per store, so that the suite's parallel workers share them out. */
export function describeDeleteMonth(store: 'sqlite' | 'postgres'): void {
  for (const backend of STORES.filter((b) => b.name === store)) {
    describe(`a month of ${MONTH.customers} customers, 1% of its transactions deleted at the source (${backend.name})`, function () {
      this.timeout(600_000);
      let sandbox: Sandbox;
      let definitions: CliConfig;
      let config: ReturnType<typeof shippedConfig>;
      let pulled: TestStore;
      let fresh: TestStore;
      before(async () => {
        sandbox = await startSandbox({ port: 0, ...MONTH, clock: DATA_CLOCK, clients: [{ client_id: 'sandbox-client', client_secret: SANDBOX_SECRET }] });
        definitions = exampleCliConfig(PARTNER, sandbox.url, `${MONTH.from}T00:00:00Z`);
        definitions.write((yaml) => yaml.replace(/^(\s+)path: \/api\/v1\/igaming\/transactions$/m, '$1path: /api/v1/igaming/transactions\n$1soft_delete: { field: status, values: [deleted] }'));
        config = shippedConfig(definitions.dir);
        pulled = await backend.create();
        fresh = await backend.create();
      });
      after(async () => {
        await sandbox?.close();
        definitions?.cleanup();
        await pulled?.drop();
        await fresh?.drop();
      });

      const cli = async (s: TestStore, now: string, args: readonly string[]) => {
        const r = await runCli(['--config', config.dir, '--store', s.url, ...args], { env: { ...clockEnv(() => new Date(now)), SANDBOX_CLIENT_SECRET: SANDBOX_SECRET, LOG_LEVEL: 'error' } });
        assert.equal(r.code, 0, `partner-sync ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout.slice(0, 2000)}\nstderr: ${r.stderr.slice(0, 2000)}`);
        return r.stdout;
      };
      const agrees = async (s: TestStore) => {
        const r = JSON.parse(await cli(s, APPLIED_AT, ['commissions', 'recompute', '--partner', PARTNER, '--json'])) as { agree: boolean; differences: number; derived_state_differences: number };
        assert.deepEqual([r.agree, r.differences, r.derived_state_differences], [true, 0, 0], JSON.stringify(r).slice(0, 2000));
      };

      it('the store, the report facts and the ledger equal a fresh load of the month without them', async () => {
        const rates = config.file('rates.csv', ratesCsv(MONTH.from, MONTH.to));
        const load = async (s: TestStore) => {
          await cli(s, LOADED_AT, ['fx', 'import', rates]);
          await cli(s, LOADED_AT, ['run', PARTNER, '--stream', 'customers']);
          await cli(s, LOADED_AT, ['run', PARTNER, '--stream', 'transactions']);
          await cli(s, LOADED_AT, ['backfill', PARTNER, '--stream', 'activity', '--from', MONTH.from, '--to', MONTH.to]);
        };
        await load(pulled);
        const before = await ledgerNet(pulled.store);

        // 1% of the month's transactions, every hundredth by id, deleted by the partner.
        const all = sandbox.data.transactions('igaming').map((t) => String(t.transaction_id)).sort();
        const deleted = all.filter((_, i) => i % 100 === 50);
        assert.ok(deleted.length > 200, `${deleted.length} of ${all.length} transactions deleted`);
        const gone = new Set(deleted);
        const month = without(sandbox.data, gone);
        const whole = truth(sandbox.data);
        deleted.forEach((id, i) => sandbox.data.setTransactionStatus('igaming', id, 'deleted', new Date(DELETED_AT + i)));

        // The fresh load: the same month pulled into another store as the partner served it before the
        // deletes (its cursor windows end at that time: the deleted transactions, changed after it, are not in them).
        await load(fresh);
        assert.equal((await fresh.store.knex('transactions').where('partner_id', PARTNER).whereIn('transaction_id', deleted).select('transaction_id')).length, 0);

        const result = JSON.parse(await cli(pulled, APPLIED_AT, ['run', PARTNER, '--stream', 'transactions', '--json'])) as unknown;
        const stones = await listTombstones(pulled.store.knex, PARTNER);
        assert.deepEqual(stones.map((s) => [s.entity, s.recordKey, s.learnedVia, s.cascadeOf]).sort(), deleted.map((id) => ['transactions', id, 'rest_flag', null]).sort(), JSON.stringify(result).slice(0, 2000));
        const clawbacks = (await pulled.store.knex('commission_ledger').where({ partner_id: PARTNER, reason: 'cpa_clawback_deleted' }).select('line_key')) as { line_key: string }[];
        assert.ok(clawbacks.length > 0, 'deleted first deposits took CPAs back');
        assert.notDeepEqual(await ledgerNet(pulled.store), before);

        const want = await endState(fresh.store);
        const got = await endState(pulled.store);
        assert.equal(got.transactions.length, all.length - deleted.length);
        assert.ok(got.transactions.every(([key]) => !gone.has(key)));
        for (const part of ['customers', 'transactions', 'activity', 'report', 'ledger', 'byAffiliatePlan'] as const) assert.deepEqual(got[part], want[part], part);

        // The report equals the truth of the month without them, to the last decimal.
        const sum = (key: 'ftd_usd' | 'deposits_usd' | 'bets_usd' | 'ggr_usd') => got.report.reduce((s, r) => s.plus(r[key]), money(0)).toFixed();
        const count = (key: 'ftd_count' | 'deposit_count' | 'unconverted') => got.report.reduce((s, r) => s + Number(r[key]), 0);
        const t = truth(month);
        assert.deepEqual({ ftd_count: count('ftd_count'), ftd_usd: sum('ftd_usd'), deposit_count: count('deposit_count'), deposits_usd: sum('deposits_usd'), bets_usd: sum('bets_usd'), ggr_usd: sum('ggr_usd'), unconverted: count('unconverted') }, t);
        assert.ok(t.deposit_count < whole.deposit_count && t.ftd_count < whole.ftd_count, `the deletes changed the figures: ${JSON.stringify([t, whole])}`);

        await agrees(pulled);
        await agrees(fresh);
      });
    });
  }
}
