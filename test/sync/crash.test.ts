/**
 * Crash safety: the sync process killed with SIGKILL at several points of a run (mid-customers,
 * mid-transactions, mid-activity, and between a batch's commit and its commission evaluation),
 * then rerun, leaves the store exactly as one uninterrupted run: nothing lost, nothing twice,
 * and the commission ledger owes every key what the uninterrupted run's ledger owes it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { packageRoot } from '../../src/paths.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { listHolds } from '../../src/commission/ledger.js';
import { money } from '../../src/kernel/money.js';
import { listRejects } from '../../src/store/rejects.js';
import type { Store } from '../../src/store/store.js';
import type { Entity } from '../../src/types.js';
import { runCli } from '../support/cli.js';
import { SANDBOX_SECRET, storedByKey } from '../support/sandbox.js';
import { STORES, type TestStore } from '../support/stores.js';

const ENTITIES: Entity[] = ['customers', 'transactions', 'activity'];
const TABLE_OF: Record<Entity, string> = { customers: 'customers', transactions: 'transactions', activity: 'gaming_activity' };

/** Net per ledger key and affiliate (lines may split differently after a crash; what is owed may not). */
async function ledgerNet(store: Store): Promise<[string, string][]> {
  const lines = (await store.knex('commission_ledger').select('line_key', 'affiliate_id', 'amount_usd')) as { line_key: string; affiliate_id: string; amount_usd: unknown }[];
  const net = new Map<string, ReturnType<typeof money>>();
  for (const l of lines) net.set(`${l.line_key} ${l.affiliate_id}`, (net.get(`${l.line_key} ${l.affiliate_id}`) ?? money(0)).plus(money(l.amount_usd)));
  return [...net].filter(([, v]) => !v.isZero()).map(([k, v]): [string, string] => [k, v.toFixed(2)]).sort();
}

async function snapshot(store: Store): Promise<unknown> {
  const tables = await Promise.all(ENTITIES.map(async (e) => [...(await storedByKey(store, 'sandbox-casino', 'igaming', e)).entries()].sort()));
  const rejects = (await listRejects(store.knex, { partner: 'sandbox-casino' })).map((r) => [r.entity, r.payload, r.status]).sort();
  const waiting = (await store.knex('waiting_records').select('entity', 'record_key', 'record')).map((w) => JSON.stringify(w)).sort();
  const holds = (await listHolds(store.knex)).map((h) => JSON.stringify([h.line_key, h.affiliate_id, h.customer_id, h.period, h.missing])).sort();
  const pending = Number(((await store.knex('commission_pending').count({ n: '*' })) as { n: number }[])[0]?.n ?? 0);
  return { tables, rejects, waiting, ledger: await ledgerNet(store), holds, pending };
}

for (const backend of STORES) {
  describe(`crash and rerun on ${backend.name}`, function () {
    this.timeout(120_000);
    let sandbox: Sandbox;
    let configDir: string;
    const stores: TestStore[] = [];
    const env = () => ({ SANDBOX_CLIENT_SECRET: SANDBOX_SECRET, LOG_LEVEL: 'error' });

    before(async () => {
      sandbox = await startSandbox({ port: 0, seed: 11, customers: 60, clients: [{ client_id: 'sandbox-client', client_secret: SANDBOX_SECRET }] });
      // A slow partner and small pages make a run long enough to be killed in each stream.
      sandbox.faults.latencyMs = 8;
      // One invalid record and one transaction of an unknown customer: rejects and waiting records must survive crashes too.
      sandbox.data.upsertCustomer('igaming', { customer_id: 'broken', signup_date: '2026-02-30T00:00:00Z', affiliate_id: 'aff-101' }, `${sandbox.data.to}T12:00:00Z`);
      sandbox.data.upsertTransaction('igaming', { transaction_id: 'orphan', customer_id: 'nobody', transaction_type: 'deposit', amount_currency: 10, currency: 'EUR', transaction_date: `${sandbox.data.to}T12:00:00Z`, status: 'approved' }, `${sandbox.data.to}T12:00:00Z`);
      configDir = mkdtempSync(join(tmpdir(), 'partner-sync-crash-'));
      mkdirSync(join(configDir, 'partners'));
      const start = `${sandbox.data.from}T00:00:00Z`;
      const yaml = readFileSync(join(packageRoot(), 'config', 'partners', 'sandbox-casino.yaml'), 'utf8')
        .replace(/base_url: .*/, `base_url: ${sandbox.url}`)
        .replace(/per_page: 500/g, 'per_page: 10')
        .replace(/^(\s+)lookback: (\S+).*$/gm, `$1lookback: $2\n$1start: ${start}`)
        .replace(/^(\s+)late_days: 2.*$/gm, `$1late_days: 2\n$1start: ${sandbox.data.from}`);
      writeFileSync(join(configDir, 'partners', 'sandbox-casino.yaml'), yaml);
      // The commission job runs after every batch: its ledger must survive crashes too.
      writeFileSync(join(configDir, 'commissions.yaml'), readFileSync(join(packageRoot(), 'config', 'commissions.yaml'), 'utf8'));
    });
    after(async () => {
      await sandbox.close();
      rmSync(configDir, { recursive: true, force: true });
      for (const s of stores) await s.drop();
    });

    const newStore = async () => {
      const s = await backend.create();
      stores.push(s);
      return s;
    };
    const runToEnd = async (s: TestStore) => {
      const r = await runCli(['--config', configDir, 'run', 'sandbox-casino', '--json'], { env: { ...env(), STORE_URL: s.url } });
      assert.equal(r.code, 0, r.stderr + r.stdout);
    };

    /** Starts a run and SIGKILLs it as soon as `table` has rows; resolves to the rows seen at the kill. */
    async function killWhen(s: TestStore, table: string): Promise<number> {
      const child = spawn(process.execPath, [join(packageRoot(), 'bin', 'partner-sync.js'), '--config', configDir, 'run', 'sandbox-casino'], {
        env: { ...process.env, ...env(), STORE_URL: s.url },
        stdio: 'ignore',
      });
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      let rows = 0;
      for (let i = 0; i < 2000 && child.exitCode === null; i++) {
        rows = Number(((await s.store.knex(table).count({ n: '*' })) as { n: number }[])[0]?.n ?? 0);
        if (rows > 0) {
          child.kill('SIGKILL');
          break;
        }
        await sleep(5);
      }
      const code = await exited;
      assert.equal(code, null, `the run ended (exit ${code}) before it could be killed when ${table} had rows`);
      return rows;
    }

    let reference: unknown;
    it('an uninterrupted run is the reference', async () => {
      const s = await newStore();
      await runToEnd(s);
      reference = await snapshot(s.store);
      const { tables, ledger, pending } = reference as { tables: unknown[][]; ledger: unknown[]; pending: number };
      assert.ok(tables.every((t) => t.length > 0));
      assert.ok(ledger.length > 0, 'the run booked commissions');
      assert.equal(pending, 0);
    });

    for (const entity of ENTITIES) {
      it(`killed while loading ${entity}, then rerun: the store equals the reference`, async () => {
        const s = await newStore();
        await killWhen(s, TABLE_OF[entity]);
        const partial = await snapshot(s.store);
        assert.notDeepEqual(partial, reference, 'the killed run had not finished');
        await runToEnd(s);
        assert.deepEqual(await snapshot(s.store), reference);
      });
    }

    it('killed between a batch\'s commit and its commission evaluation (its scope committed, not yet taken), then rerun: the store and the ledger equal the reference', async () => {
      // The window is a few milliseconds wide: the kill may land just after the evaluation took the
      // scope. Every attempt must rerun to the reference; at least one must have died inside it.
      const caught: number[] = [];
      for (let attempt = 0; attempt < 5 && caught.length === 0; attempt++) {
        const s = await newStore();
        await killWhen(s, 'commission_pending');
        const partial = await snapshot(s.store) as { pending: number };
        if (partial.pending > 0) caught.push(partial.pending);
        await runToEnd(s);
        assert.deepEqual(await snapshot(s.store), reference);
      }
      assert.ok(caught.length > 0, 'no attempt was killed with an evaluation pending');
    });
  });
}
