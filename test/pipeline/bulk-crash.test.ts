/**
 * A bulk run killed between its loads and their evaluation: `partner-sync import` of a month's
 * transactions is SIGKILLed once batches have committed whose fraud rules, commissions and report
 * facts wait for the run's end. `status` and `report` then say what is not evaluated yet (count and age); the
 * rerun of the same import settles it first and ends where an uninterrupted import ends: the same
 * flags, holds, report figures and net per ledger key, and a ledger that agrees with a recompute.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { partnersPage } from '../../src/console/pages.js';
import type { Session } from '../../src/access/console-users.js';
import { money } from '../../src/kernel/money.js';
import { packageRoot } from '../../src/paths.js';
import { createSandboxData } from '../../src/sandbox/data.js';
import type { Store } from '../../src/store/store.js';
import { STORES, type TestStore } from '../support/stores.js';
import { cli, ndjson, PARTNER, ratesCsv, shippedConfig } from '../volume/support.js';
import { unevaluated } from '../../src/store/unevaluated.js';
import { parseRatesCsv, saveRates } from '../../src/store/fx-rates.js';

// With planted fraud patterns: the clean generated month flags no one, and the crash must leave flags as an uninterrupted run does.
const data = createSandboxData({ seed: 5, customers: 400, from: '2026-10-01', to: '2026-10-31', fraudPatterns: 3, clock: () => new Date('2026-11-01T12:00:00.000Z') });
const FILES = {
  customers: ndjson(data.customers('igaming')),
  transactions: ndjson(data.transactions('igaming').map(({ updated_at: _u, ...t }) => t)),
  activity: ndjson(data.activity('igaming')),
};

async function count(store: Store, table: string): Promise<number> {
  return Number(((await store.knex(table).count({ n: '*' })) as { n: unknown }[])[0]?.n ?? 0);
}

async function outcome(store: Store): Promise<unknown> {
  const knex = store.knex;
  const flags = (await knex('fraud_flags as f').leftJoin('fraud_flag_customers as c', 'c.flag_id', 'f.id').select('f.rule', 'f.instance_key', 'f.status', 'c.customer_id'))
    .map((r: Record<string, unknown>) => JSON.stringify(r)).sort();
  const net = new Map<string, ReturnType<typeof money>>();
  for (const l of (await knex('commission_ledger').select('line_key', 'amount_usd')) as { line_key: string; amount_usd: unknown }[]) net.set(l.line_key, (net.get(l.line_key) ?? money(0)).plus(money(String(l.amount_usd))));
  const figures = await knex('report_cells').select('day', 'affiliate_id', 'registrations', 'ftd_count', 'ftd_usd', 'depositors', 'deposit_count', 'deposits_usd', 'ngr_usd')
    .orderBy(['day', 'affiliate_id', 'campaign_id']);
  return {
    flags,
    holds: (await knex('commission_holds').select('line_key').orderBy('line_key')).map((h: { line_key: string }) => h.line_key),
    reviewHolds: (await knex('commission_review_holds').select('line_key').orderBy('line_key')).map((h: { line_key: string }) => h.line_key),
    ledger: [...net].filter(([, v]) => !v.isZero()).map(([k, v]) => `${k} ${v.toFixed(2)}`).sort(),
    figures: figures.map((f: Record<string, unknown>) => JSON.stringify({ ...f, day: String(f.day instanceof Date ? f.day.toISOString() : f.day).slice(0, 10) })),
  };
}

for (const backend of STORES) {
  describe(`a bulk import killed before its evaluation, then rerun (${backend.name})`, function () {
    this.timeout(300_000);
    let crashed: TestStore;
    let reference: TestStore;
    let config: ReturnType<typeof shippedConfig>;
    before(async () => {
      crashed = await backend.create();
      reference = await backend.create();
      config = shippedConfig();
      for (const [name, text] of Object.entries(FILES)) config.file(`${name}.ndjson`, text);
      config.file('rates.csv', ratesCsv('2026-10-01', '2026-10-31'));
    });
    after(async () => {
      config?.cleanup();
      await crashed?.drop();
      await reference?.drop();
    });

    /**
     * Runs `partner-sync` with these arguments on the store and SIGKILLs it as soon as `due` holds;
     * resolves whether it was killed (not ended first). Batches of 500 (the month's 1,800-odd
     * transactions in four): the kill lands between commits, while they wait. The references import
     * in the default batches: the outcome must not depend on them.
     */
    async function killedWhen(t: TestStore, args: readonly string[], due: () => Promise<boolean>): Promise<boolean> {
      const child = spawn(process.execPath, [join(packageRoot(), 'bin', 'partner-sync.js'), '--config', config.dir, '--store', t.url, ...args], {
        env: { ...process.env, LOG_LEVEL: 'error', PARTNER_SYNC_IMPORT_BATCH: '500' }, stdio: 'ignore',
      });
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      let killed = false;
      for (let i = 0; i < 2000 && child.exitCode === null; i++) {
        if (await due()) {
          child.kill('SIGKILL');
          killed = true;
          break;
        }
        await sleep(20);
      }
      await exited;
      return killed;
    }

    const importArgs = (entity: string) => ['import', PARTNER, '--variant', 'igaming', '--entity', entity, join(config.dir, `${entity}.ndjson`)];

    it('says what waits for evaluation, and the rerun ends as an uninterrupted import', async () => {
      for (const t of [crashed, reference]) {
        await cli(config.dir, t.url, ['fx', 'import', join(config.dir, 'rates.csv')]);
        await cli(config.dir, t.url, importArgs('customers'));
      }
      // Killed once committed batches wait for the fraud rules and commissions. A transactions batch
      // defers the fraud rules by day (fraud_deferred_days), its customers listed at the settle.
      const killed = await killedWhen(crashed, importArgs('transactions'),
        async () => (await count(crashed.store, 'fraud_deferred_days')) > 0 && (await count(crashed.store, 'commission_pending')) > 0 && (await count(crashed.store, 'report_pending')) > 0);
      assert.ok(killed, 'the import was killed while its loads waited for evaluation');
      const loaded = await count(crashed.store, 'transactions');
      assert.ok(loaded > 0, 'some batches committed before the kill');

      const status = JSON.parse(await cli(config.dir, crashed.url, ['status', '--json'])) as { unevaluated: { partner: string; fraud_customers: number; commission_entries: number; report_days: number; age_seconds: number }[] };
      const waiting = status.unevaluated.find((u) => u.partner === PARTNER);
      assert.ok(waiting && waiting.fraud_customers > 0 && waiting.commission_entries > 0 && waiting.report_days > 0 && waiting.report_days <= 31 && waiting.age_seconds >= 0, JSON.stringify(status.unevaluated));
      assert.match(await cli(config.dir, crashed.url, ['status']), new RegExp(`${PARTNER}: loaded, not evaluated yet: ${waiting.fraud_customers} customers for the fraud rules, ${waiting.commission_entries} commission scope entries, the report facts of ${waiting.report_days} days, the oldest \\d+ s old`));
      assert.match(await cli(config.dir, crashed.url, ['report', 'affiliates', '--partner', PARTNER]), /note: sandbox-casino: loaded, not evaluated yet: .*: the report's figures, commissions and fraud holds do not count them yet/);
      // The console's Partners page, as an operator sees it.
      const page = String(await partnersPage(crashed.store, [], { user: { name: 'ops', role: 'operator' }, csrf: 'x' } as unknown as Session));
      assert.match(page, new RegExp(`<div class="notice" role="status"><p>${PARTNER}: loaded, not evaluated yet: ${waiting.fraud_customers} customers for the fraud rules, ${waiting.commission_entries} commission scope entries, the report facts of ${waiting.report_days} days, the oldest \\d+ s old\\. The report&#39;s figures, commissions and fraud holds do not count them yet`));

      for (const entity of ['transactions', 'activity']) {
        await cli(config.dir, crashed.url, importArgs(entity));
        await cli(config.dir, reference.url, importArgs(entity));
      }
      assert.deepEqual((JSON.parse(await cli(config.dir, crashed.url, ['status', '--json'])) as { unevaluated: unknown[] }).unevaluated, []);
      const [after, want] = [await outcome(crashed.store), await outcome(reference.store)];
      assert.ok((want as { ledger: string[] }).ledger.length > 100 && (want as { flags: string[] }).flags.length > 0, 'the month books commissions and raises flags');
      assert.deepEqual(after, want);
      const recompute = JSON.parse(await cli(config.dir, crashed.url, ['commissions', 'recompute', '--partner', PARTNER, '--json'])) as { agree: boolean; differences: number };
      assert.deepEqual([recompute.agree, recompute.differences], [true, 0]);
    });

    it('an import of the three files killed while its activity loads: the rerun ends as an uninterrupted one', async () => {
      const [killedStore, wholeStore] = [await backend.create(), await backend.create()];
      try {
        const month = ['import', PARTNER, '--variant', 'igaming', ...['customers', 'transactions', 'activity'].flatMap((e) => [`--${e}`, join(config.dir, `${e}.ndjson`)])];
        const { rates } = parseRatesCsv(ratesCsv('2026-10-01', '2026-10-31'));
        for (const t of [killedStore, wholeStore]) await t.store.transaction((trx) => saveRates(trx, rates, 'rates.csv', t.store.now()));
        await cli(config.dir, wholeStore.url, month);
        // The customers' and transactions' evaluation waits for the end of the three files.
        const killed = await killedWhen(killedStore, month, async () => (await count(killedStore.store, 'gaming_activity')) > 0 && (await count(killedStore.store, 'fraud_deferred')) > 0);
        assert.ok(killed, 'the import was killed while its activity loaded');
        assert.equal(await count(killedStore.store, 'fraud_flags') + await count(killedStore.store, 'commission_ledger'), 0, 'nothing was evaluated before the kill');
        // What `status` shows (the test above reads it through the command).
        const waiting = await unevaluated(killedStore.store.knex, new Date());
        assert.equal(waiting.find((u) => u.partner === PARTNER)?.fraud_customers, data.customers('igaming').length, JSON.stringify(waiting));
        await cli(config.dir, killedStore.url, month);
        assert.deepEqual(await unevaluated(killedStore.store.knex, new Date()), []);
        const [after, want] = [await outcome(killedStore.store), await outcome(wholeStore.store)];
        assert.ok((want as { ledger: string[] }).ledger.length > 100 && (want as { flags: string[] }).flags.length > 0, 'the month books commissions and raises flags');
        assert.deepEqual(after, want);
      } finally {
        await killedStore.drop();
        await wholeStore.drop();
      }
    });
  });
}
