/**
 * Crash safety of deletes learned at the source (docs/loading.md, Deletes), on every store: a month
 * of the sandbox partner is loaded by `partner-sync run`, then the partner marks a few hundred of
 * its transactions deleted (the stream's `soft_delete: { field: status, values: [deleted] }`); the
 * run that applies them is killed with SIGKILL once its first tombstones are committed, and run
 * again to its end. The store must end as a store of the same input whose run was not interrupted:
 * the same live rows, the same tombstones by record key, the same ledger per key (and per affiliate
 * and plan), the same report facts, and recompute agreeing. Every command runs on a test clock
 * (PARTNER_SYNC_TEST_NOW), the sandbox on its own, so the test does not depend on the day it runs.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { clockEnv } from '../../src/kernel/clock.js';
import { money } from '../../src/kernel/money.js';
import { packageRoot } from '../../src/paths.js';
import { affiliateReport } from '../../src/reports/affiliates.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import type { Store } from '../../src/store/store.js';
import { listTombstones } from '../../src/store/tombstones.js';
import { runCli } from '../support/cli.js';
import { exampleCliConfig, type CliConfig } from '../support/cli-config.js';
import { SANDBOX_SECRET, storedByKey } from '../support/sandbox.js';
import { STORES, type TestStore } from '../support/stores.js';
import { ratesCsv, shippedConfig } from '../volume/support.js';

const PARTNER = 'sandbox-casino';
const DATA = { seed: 5, customers: 400, from: '2026-10-01', to: '2026-10-31' } as const;
const DATA_CLOCK = (): Date => new Date('2026-11-01T12:00:00.000Z');
/** The month's load, the partner's deletes, and the run that applies them. */
const LOADED_AT = '2026-11-01T13:00:00.000Z';
const DELETED_AT = Date.parse('2026-11-01T14:00:00.000Z');
const APPLIED_AT = '2026-11-01T15:00:00.000Z';
const at = (iso: string) => () => new Date(iso);

/**
 * Net per ledger key and affiliate, keys owing nothing left out: a killed run's lines may split
 * differently, what is owed may not. (A run evaluating after each page may book a CPA that a later
 * page of the same run takes back, when a deleted first deposit leaves a qualifying one that is
 * deleted next; the rerun of a killed run evaluates once at its end and books neither.)
 */
async function ledgerNet(store: Store): Promise<[string, string][]> {
  const lines = (await store.knex('commission_ledger').where('partner_id', PARTNER).select('line_key', 'affiliate_id', 'amount_usd')) as { line_key: string; affiliate_id: string; amount_usd: unknown }[];
  const net = new Map<string, ReturnType<typeof money>>();
  for (const l of lines) net.set(`${l.line_key} ${l.affiliate_id}`, (net.get(`${l.line_key} ${l.affiliate_id}`) ?? money(0)).plus(money(String(l.amount_usd))));
  return [...net].filter(([, v]) => !v.isZero()).map(([k, v]): [string, string] => [k, v.toFixed(2)]).sort();
}

/** The ledger summed per affiliate and plan (a line key's second part names its plan). */
function perAffiliatePlan(net: readonly [string, string][]): Record<string, string> {
  const sums = new Map<string, ReturnType<typeof money>>();
  for (const [key, amount] of net) {
    const [lineKey = '', affiliate = ''] = key.split(' ');
    const group = `${affiliate} ${lineKey.split('|')[1]}`;
    sums.set(group, (sums.get(group) ?? money(0)).plus(money(amount)));
  }
  return Object.fromEntries([...sums].sort().map(([k, v]) => [k, v.toFixed(2)]));
}

interface EndState {
  customers: [string, unknown][];
  transactions: [string, unknown][];
  tombstones: string[];
  ledger: [string, string][];
  byAffiliatePlan: Record<string, string>;
  report: unknown[];
}

async function endState(store: Store): Promise<EndState> {
  const live = async (entity: 'customers' | 'transactions') => [...(await storedByKey(store, PARTNER, 'igaming', entity)).entries()].sort(([a], [b]) => a.localeCompare(b));
  const stones = await listTombstones(store.knex, PARTNER);
  const keyOf = new Map(stones.map((s) => [s.id, `${s.entity}:${s.recordKey}`]));
  const ledger = await ledgerNet(store);
  return {
    customers: await live('customers'),
    transactions: await live('transactions'),
    tombstones: stones.map((s) => `${s.entity}:${s.recordKey} ${s.customerId} ${s.learnedVia} ${s.cascadeOf === null ? '-' : keyOf.get(s.cascadeOf)} ${s.row.status}`).sort(),
    ledger,
    byAffiliatePlan: perAffiliatePlan(ledger),
    report: (await affiliateReport(store, { partner: PARTNER }, 'day')).rows,
  };
}

/** The definition with the mass-delete guard off (max_share 1). */
const unguarded = (yaml: string): string => `${yaml}\ndelete_guard: { max_share: 1 }\n`;

for (const backend of STORES) {
  describe(`a run applying deletes killed and run again (${backend.name})`, function () {
    this.timeout(300_000);
    let sandbox: Sandbox;
    let definitions: CliConfig;
    let config: ReturnType<typeof shippedConfig>;
    let reference: TestStore;
    let killed: TestStore;
    before(async () => {
      sandbox = await startSandbox({ port: 0, ...DATA, clock: DATA_CLOCK, clients: [{ client_id: 'sandbox-client', client_secret: SANDBOX_SECRET }] });
      definitions = exampleCliConfig(PARTNER, sandbox.url, `${DATA.from}T00:00:00Z`);
      // The mass-delete guard is another test's (test/pipeline/delete-guard.test.ts): a quarter of the month goes here.
      definitions.write((yaml) => unguarded(yaml.replace(/^(\s+)path: \/api\/v1\/igaming\/transactions$/m, '$1path: /api/v1/igaming/transactions\n$1soft_delete: { field: status, values: [deleted] }')));
      config = shippedConfig(definitions.dir);
      reference = await backend.create();
      killed = await backend.create();
    });
    after(async () => {
      await sandbox?.close();
      definitions?.cleanup();
      await reference?.drop();
      await killed?.drop();
    });

    const env = (now: string) => ({ ...clockEnv(at(now)), SANDBOX_CLIENT_SECRET: SANDBOX_SECRET, LOG_LEVEL: 'error' });
    const cli = async (s: TestStore, now: string, args: string[]) => {
      const r = await runCli(['--config', config.dir, '--store', s.url, ...args], { env: env(now) });
      assert.equal(r.code, 0, `partner-sync ${args.join(' ')}: exit ${r.code}\n${r.stdout.slice(0, 2000)}\n${r.stderr.slice(0, 2000)}`);
      return r.stdout;
    };
    const tombstones = async (s: TestStore) => Number(((await s.store.knex('tombstones').count({ n: '*' })) as { n: unknown }[])[0]?.n ?? 0);

    it('ends as the uninterrupted run: live rows, tombstones, ledger, report facts', async () => {
      // The month, loaded the same way into both stores.
      for (const s of [reference, killed]) {
        await cli(s, LOADED_AT, ['fx', 'import', config.file('rates.csv', ratesCsv(DATA.from, DATA.to))]);
        await cli(s, LOADED_AT, ['run', PARTNER, '--stream', 'customers']);
        await cli(s, LOADED_AT, ['run', PARTNER, '--stream', 'transactions']);
      }
      const loaded = await endState(reference.store);
      assert.deepEqual(await endState(killed.store), loaded);

      // The partner deletes every transaction of each sixth customer: a few hundred records, FTDs among them.
      const customers = [...new Set(sandbox.data.transactions('igaming').map((t) => String(t.customer_id)))].sort();
      const gone = new Set(customers.filter((_, i) => i % 6 === 0));
      const deleted = sandbox.data.transactions('igaming').filter((t) => gone.has(String(t.customer_id))).map((t) => String(t.transaction_id)).sort();
      assert.ok(deleted.length >= 200 && deleted.length <= 600, `${deleted.length} transactions deleted`);
      deleted.forEach((id, i) => sandbox.data.setTransactionStatus('igaming', id, 'deleted', new Date(DELETED_AT + i)));
      // Small pages from a slow partner: the run that applies them commits page by page, long enough to be killed.
      definitions.write((yaml) => unguarded(yaml.replace(/^(\s+)path: \/api\/v1\/igaming\/transactions$/m, '$1path: /api/v1/igaming/transactions\n$1soft_delete: { field: status, values: [deleted] }').replace(/per_page: 500/g, 'per_page: 10')));
      sandbox.faults.latencyMs = 15;

      await cli(reference, APPLIED_AT, ['run', PARTNER, '--stream', 'transactions']);
      const want = await endState(reference.store);
      assert.equal(want.tombstones.length, deleted.length);
      assert.deepEqual(want.tombstones.map((s) => s.split(' ')[0]), deleted.map((id) => `transactions:${id}`).sort());
      assert.ok(want.tombstones.every((s) => / rest_flag - /.test(s)), want.tombstones.slice(0, 3).join('\n'));
      assert.equal(want.transactions.length, loaded.transactions.length - deleted.length);
      assert.ok(want.transactions.every(([, r]) => !gone.has(String((r as { customer_id: string }).customer_id))));
      assert.notDeepEqual(want.ledger, loaded.ledger, 'the deletes took commissions back');
      const clawbacks = Number(((await reference.store.knex('commission_ledger').where({ partner_id: PARTNER, reason: 'cpa_clawback_deleted' }).count({ n: '*' })) as { n: unknown }[])[0]?.n);
      assert.ok(clawbacks > 10, `${clawbacks} CPA clawbacks`);

      // The same run on the other store, killed once its first tombstones are committed.
      const child = spawn(process.execPath, [join(packageRoot(), 'bin', 'partner-sync.js'), '--config', config.dir, '--store', killed.url, 'run', PARTNER, '--stream', 'transactions'], {
        env: { ...process.env, ...env(APPLIED_AT) },
        stdio: 'ignore',
      });
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
      let atKill = 0;
      for (let i = 0; i < 6000 && child.exitCode === null; i++) {
        atKill = await tombstones(killed);
        if (atKill > 0) {
          child.kill('SIGKILL');
          break;
        }
        await sleep(5);
      }
      assert.equal(await exited, 'SIGKILL', 'the run ended before it could be killed');
      const partial = await tombstones(killed);
      assert.ok(partial > 0 && partial < deleted.length, `killed with ${partial} of ${deleted.length} deletes applied`);

      await cli(killed, APPLIED_AT, ['run', PARTNER, '--stream', 'transactions']);
      const got = await endState(killed.store);
      assert.deepEqual(got, want);

      for (const s of [reference, killed]) {
        const check = JSON.parse(await cli(s, APPLIED_AT, ['commissions', 'recompute', '--partner', PARTNER, '--json'])) as { agree: boolean; differences: number };
        assert.deepEqual([check.agree, check.differences], [true, 0], JSON.stringify(check).slice(0, 2000));
      }
    });
  });
}
