/**
 * The worker's scheduled reconcile infers deletes (jobs/infer-deletes.ts, docs/loading.md, Deletes
 * inferred from reconcile), on every store, against the sandbox partner over real HTTP: a deposit
 * hard-deleted at the partner is a candidate after the first day's scan and deleted by the next
 * day's, its CPA clawed back (100 USD, by hand), with a `reconcile_deletes` event each time;
 * `infer_deletes: false` only reports.
 */
import assert from 'node:assert/strict';
import { runPartner } from '../../jobs/run-partner.js';
import { inferDeletes } from '../../jobs/infer-deletes.js';
import type { PartnerDefinition } from '../../src/config/definition.js';
import { createRedactor } from '../../src/config/redact.js';
import { money } from '../../src/kernel/money.js';
import { silentLogger } from '../../src/log.js';
import type { Sandbox } from '../../src/sandbox/server.js';
import { localLocks } from '../../src/store/stream-locks.js';
import { listTombstones } from '../../src/store/tombstones.js';
import { startReconcileSchedule } from '../../src/worker/reconcile-schedule.js';
import { loaderWithEveryJob } from '../support/loader.js';
import { CPA, planWith, plansFrom, plansYaml } from '../support/plans.js';
import { sandboxPartnerEach } from '../support/sandbox.js';
import { STORES, type TestStore } from '../support/stores.js';
import { FakeTimers } from './support/fake-timers.js';
import { captureLogger } from './support/log-capture.js';

const PLANS = plansFrom(plansYaml(planWith(CPA, { partner: 'sandbox-casino' })));

for (const backend of STORES) {
  describe(`the scheduled reconcile infers deletes (${backend.name})`, function () {
    this.timeout(120_000);
    const made = sandboxPartnerEach(backend, { seed: 11, customers: 40 });
    let t: TestStore;
    let sandbox: Sandbox;
    let def: PartnerDefinition;
    beforeEach(() => ({ t, sandbox, def } = made));

    for (const infer of [true, false]) {
      it(infer ? 'a deposit gone from the partner is deleted by the second day\'s scan, its CPA clawed back' : 'infer_deletes: false only reports', async () => {
        def.reconcile = { schedule: '30 6 * * *', days: 3, infer_deletes: infer };
        // A new player of yesterday (UTC) with one approved deposit: inside both days' windows.
        const yesterday = sandbox.data.to;
        const base = sandbox.data.customers('igaming')[0]!;
        const deposit = sandbox.data.transactions('igaming').find((x) => x.transaction_type === 'deposit' && x.status === 'approved')!;
        sandbox.data.upsertCustomer('igaming', { ...base, customer_id: 'late-1', signup_date: `${yesterday}T08:00:00Z`, email: 'late-1@mail.example' });
        sandbox.data.upsertTransaction('igaming', { ...deposit, transaction_id: 'late-d1', customer_id: 'late-1', transaction_date: `${yesterday}T09:00:00Z`, amount_currency: 50, amount_usd: 50, currency: 'USD' });
        const loader = loaderWithEveryJob(t.store, { plans: PLANS });
        const results = await runPartner({ loader, clock: t.store.clock, logger: silentLogger(), redact: createRedactor(def.secrets) }, def, { kind: 'run', scheduledFor: new Date(t.store.clock()) });
        assert.ok(results.every((r) => r.status === 'succeeded'), JSON.stringify(results));
        const gone = (await t.store.knex('commission_ledger').where({ partner_id: 'sandbox-casino', customer_id: 'late-1', reason: 'cpa_ftd' }).first('line_key')) as { line_key: string };
        assert.ok(gone, 'the CPA of late-1 is paid');
        assert.ok(sandbox.data.deleteRecord('igaming', 'transactions', 'late-d1'));
        const net = async () => ((await t.store.knex('commission_ledger').where('line_key', gone.line_key).select('amount_usd')) as { amount_usd: unknown }[]).reduce((s, l) => s.plus(money(String(l.amount_usd))), money(0)).toFixed(2);
        assert.equal(await net(), '100.00');

        const timers = new FakeTimers(`${sandbox.data.to}T23:00:00Z`);
        const today = new Date(Date.parse(`${yesterday}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
        const tomorrow = new Date(Date.parse(`${today}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
        const { logger, lines } = captureLogger();
        const schedule = startReconcileSchedule({
          store: t.store, timers, logger, redact: createRedactor(def.secrets), locks: localLocks(), definitions: () => [def],
          inferDeletes: (d, scan) => inferDeletes(loader, d, scan),
        });
        try {
          await timers.advanceTo(`${today}T06:31:00Z`, () => schedule.settled());
          assert.equal(await net(), '100.00', 'the first scan deletes nothing');
          await timers.advanceTo(`${tomorrow}T06:31:00Z`, () => schedule.settled());
        } finally {
          await schedule.stop();
        }
        const said = lines.filter((l) => l.event === 'reconcile_deletes').map((l) => String(l.msg ?? l.message));
        if (!infer) {
          assert.deepEqual(said, []);
          assert.equal(await net(), '100.00');
          assert.equal((await listTombstones(t.store.knex, 'sandbox-casino')).length, 0);
          return;
        }
        assert.equal(said.length, 4, said.join('\n'));
        assert.match(said.find((l) => l.includes('deletes transactions')) ?? '', /deletes transactions: 1 missing at the source; 1 seen missing for the first time/);
        assert.match(said.filter((l) => l.includes('deletes transactions'))[1] ?? '', /deletes transactions: 1 missing at the source; 1 deleted \(the previous scan agreed\)/);
        assert.equal(await net(), '0.00');
        assert.deepEqual((await listTombstones(t.store.knex, 'sandbox-casino')).map((x) => [x.recordKey, x.learnedVia]), [['late-d1', 'reconcile']]);
      });
    }
  });
}
