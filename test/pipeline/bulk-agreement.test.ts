/**
 * Bulk runs evaluate the fraud rules and commissions over groups (Loader.deferJobs): the outcome
 * must be what batch-by-batch evaluation gives. A seeded random month of one iGaming partner
 * (the sandbox's generator, records shuffled, some re-sent, a few customers with a second account)
 * is loaded into two stores of the same
 * kind: one store batch by batch (small batches, every job after each commit, as pushes and
 * incremental runs load), the other as bulk runs whose groups settle every few hundred records,
 * each group's commissions evaluated in passes of a few dozen customers: the month's three files
 * by one `importFiles` (`import --customers F --transactions F --activity F`), the corrections by
 * `importFile`. Later
 * versions change records: deposits reversed or moved a day in the same file, and a corrections
 * file after the activity that moves customers to another affiliate and campaign (their whole
 * history changes cell). Then: the same report (every figure; commissions as each affiliate's net), the same
 * fraud flags and customers, the same holds, the same net per ledger key; the bulk store's ledger
 * agrees with a recompute and its report facts with a rebuild; nothing is left unevaluated.
 * TEST_SEED=n repeats a seed.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { recompute } from '../../src/commission/recompute.js';
import { importFile, importFiles } from '../../jobs/import-file.js';
import { unevaluated } from '../../src/store/unevaluated.js';
import { loadPlans } from '../../src/commission/load-plans.js';
import { loadFraudConfig } from '../../src/fraud/config.js';
import { money } from '../../src/kernel/money.js';
import { silentLogger } from '../../src/log.js';
import { packageRoot } from '../../src/paths.js';
import { affiliateReport } from '../../src/reports/affiliates.js';
import { rebuildFacts } from '../../src/reports/facts.js';
import { createSandboxData } from '../../src/sandbox/data.js';
import { mulberry32 } from '../../src/kernel/prng.js';
import { parseRatesCsv, saveRates } from '../../src/store/fx-rates.js';
import type { Store } from '../../src/store/store.js';
import type { Entity, SpecRecord } from '../../src/types.js';
import { loaderWithEveryJob } from '../support/loader.js';
import { STORES, type TestStore } from '../support/stores.js';
import { ratesCsv } from '../volume/support.js';

const PARTNER = 'sandbox-casino';
const ENTITIES: readonly Entity[] = ['customers', 'transactions', 'activity'];

function shuffled<T>(list: readonly T[], random: () => number): T[] {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** The day before a spec date-time's instant, in UTC. */
const dayBefore = (at: unknown): string => new Date(Date.parse(String(at)) - 86_400_000).toISOString();

/**
 * The month's records per entity, shuffled, with about 5% of each re-sent later in the same file
 * and some deposits changed by a later version in it; `corrections`: customers moved to another
 * affiliate and campaign, loaded after everything else.
 */
function month(seed: number): Record<Entity, SpecRecord[]> & { corrections: SpecRecord[] } {
  const random = mulberry32(seed);
  const data = createSandboxData({ seed, customers: 400, from: '2026-10-01', to: '2026-10-31', clock: () => new Date('2026-11-01T12:00:00.000Z') });
  const raw: Record<Entity, SpecRecord[]> = {
    customers: data.customers('igaming') as SpecRecord[],
    transactions: data.transactions('igaming').map(({ updated_at: _u, ...t }) => t) as SpecRecord[],
    activity: data.activity('igaming') as SpecRecord[],
  };
  // A second account of some customers (the same e-mail, the same deposits): duplicate_identity
  // flags them whatever the seed, and their commissions are held for review.
  for (const c of raw.customers.filter(() => random() < 0.03)) {
    raw.customers.push({ ...c, customer_id: `${String(c.customer_id)}-2` });
    for (const t of raw.transactions.filter((x) => x.customer_id === c.customer_id)) raw.transactions.push({ ...t, transaction_id: `${String(t.transaction_id)}-2`, customer_id: `${String(c.customer_id)}-2` });
  }
  const out = {} as Record<Entity, SpecRecord[]> & { corrections: SpecRecord[] };
  for (const e of ENTITIES) {
    const list = shuffled(raw[e], random);
    out[e] = [...list, ...list.filter(() => random() < 0.05)];
  }
  // A later version of some deposits: reversed (the customer's FTD may move to a later deposit), or
  // dated a day earlier (its day's cells and maybe the FTD move).
  for (const t of raw.transactions.filter((x) => x.transaction_type === 'deposit' && String(x.transaction_date) >= '2026-10-03' && random() < 0.06)) {
    out.transactions.push(random() < 0.5 ? { ...t, status: 'reversed' } : { ...t, transaction_date: dayBefore(t.transaction_date) });
  }
  const affiliates = [...new Set(raw.customers.map((c) => String(c.affiliate_id)))].sort();
  out.corrections = raw.customers.filter(() => random() < 0.04).map((c) => ({
    ...c, affiliate_id: affiliates[Math.floor(random() * affiliates.length)], campaign_id: `moved-${Math.floor(random() * 3)}`, last_modified_date: '2026-11-01T12:00:00.000Z',
  }));
  return out;
}

/**
 * What must agree between the two ways of loading. The commission columns show the ledger's
 * history by the month a line was booked: batch by batch, a CPA may be booked and then clawed back,
 * where a bulk group books the final state once; and a CPA booked before a fraud flag opened stays
 * booked and is withheld, where a bulk group judges the flag first and the CPA waits unbooked for
 * the review (docs/commissions.md: payable is what is booked minus what is withheld). What must
 * agree is each ledger key's payable net, what each key holds for review (withheld + waiting),
 * and each affiliate's payable total.
 */
async function outcome(store: Store): Promise<Record<string, unknown>> {
  const knex = store.knex;
  const report = await affiliateReport(store, { partner: PARTNER }, 'month');
  // A month with ledger lines only (a clawback booked in a later month) is a row of its own: not a figure.
  const zero = (v: unknown) => v === 0 || v === null || (Array.isArray(v) && v.length === 0) || (typeof v === 'string' && /^-?0(\.0+)?$/.test(v));
  const figures = report.rows.map(({ commissions_earned_usd: _e, commissions_clawed_back_usd: _c, commissions_net_usd: _n, ...rest }) => rest)
    .filter((r) => Object.entries(r).some(([k, v]) => !['partner', 'affiliate', 'month', 'day', 'campaign'].includes(k) && !zero(v)));
  const flags = (await knex('fraud_flags').where('partner_id', PARTNER).select('id', 'rule', 'instance_key', 'affiliate_id', 'severity', 'status')) as { id: number; rule: string; instance_key: string }[];
  const members = (await knex('fraud_flag_customers').select('flag_id', 'customer_id')) as { flag_id: number; customer_id: string }[];
  const flagCustomers = (id: number) => members.filter((m) => Number(m.flag_id) === Number(id)).map((m) => m.customer_id).sort();
  const add = (map: Map<string, ReturnType<typeof money>>, key: string, amount: unknown) => map.set(key, (map.get(key) ?? money(0)).plus(money(String(amount))));
  const payable = new Map<string, ReturnType<typeof money>>();
  const affiliatePayable = new Map<string, ReturnType<typeof money>>();
  for (const l of (await knex('commission_ledger').where('partner_id', PARTNER).select('line_key', 'affiliate_id', 'amount_usd')) as { line_key: string; affiliate_id: string; amount_usd: unknown }[]) {
    add(payable, l.line_key, l.amount_usd);
    add(affiliatePayable, l.affiliate_id, l.amount_usd);
  }
  const reviewHeld = new Map<string, ReturnType<typeof money>>();
  const reviewHolds = (await knex('commission_review_holds').where('partner_id', PARTNER).select('line_key', 'affiliate_id', 'plan_id', 'withheld_usd', 'waiting_usd').orderBy('line_key')) as
    { line_key: string; affiliate_id: string; plan_id: string; withheld_usd: unknown; waiting_usd: unknown }[];
  for (const h of reviewHolds) {
    add(payable, h.line_key, money(String(h.withheld_usd)).negated());
    add(affiliatePayable, h.affiliate_id, money(String(h.withheld_usd)).negated());
    add(reviewHeld, h.line_key, money(String(h.withheld_usd)).plus(money(String(h.waiting_usd))));
  }
  const listed = (map: Map<string, ReturnType<typeof money>>) => [...map].filter(([, v]) => !v.isZero()).map(([k, v]) => `${k} ${v.toFixed(2)}`).sort();
  return {
    report: figures,
    affiliatePayable: listed(affiliatePayable),
    flags: flags.map(({ id, ...f }) => ({ ...f, customers: flagCustomers(id) })).sort((a, b) => `${a.rule}|${a.instance_key}`.localeCompare(`${b.rule}|${b.instance_key}`)),
    holds: (await knex('commission_holds').select('line_key', 'affiliate_id', 'plan_id').orderBy('line_key')),
    reviewHolds: reviewHolds.map((h) => ({ line_key: h.line_key, affiliate_id: h.affiliate_id, plan_id: h.plan_id })),
    reviewHeld: listed(reviewHeld),
    payable: listed(payable),
  };
}

for (const backend of STORES) {
  describe(`bulk runs agree with batch-by-batch evaluation (${backend.name})`, function () {
    this.timeout(600_000);
    const seed = Number(process.env.TEST_SEED ?? Math.floor(Math.random() * 1_000_000));
    let a: TestStore;
    let b: TestStore;
    let dir: string;
    before(async () => {
      a = await backend.create();
      b = await backend.create();
      dir = mkdtempSync(join(tmpdir(), 'bulk-agreement-'));
    });
    after(async () => {
      await a?.drop();
      await b?.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    it(`seed ${seed}: the same report, flags, holds and ledger; the bulk ledger agrees with a recompute and its facts with a rebuild`, async () => {
      const records = month(seed);
      const plans = (await loadPlans(join(packageRoot(), 'config', 'commissions.yaml'))).plans;
      const fraud = (await loadFraudConfig(join(packageRoot(), 'config', 'fraud.yaml'))).config;
      assert.ok(plans.length > 0 && fraud);
      const logger = silentLogger();
      const loaders = [a, b].map((t, i) => loaderWithEveryJob(t.store, { plans, logger, fraud, ...(i === 1 ? { settleEvery: 700 } : {}) }));
      for (const t of [a, b]) {
        const { rates } = parseRatesCsv(ratesCsv('2026-10-01', '2026-10-31'));
        await t.store.transaction((trx) => saveRates(trx, rates, 'rates.csv', t.store.now()));
      }
      const random = mulberry32(seed ^ 0x5eed);
      const steps: [Entity, SpecRecord[], string][] = [...ENTITIES.map((e) => [e, records[e], e] as [Entity, SpecRecord[], string]), ['customers', records.corrections, 'corrections']];
      for (const [entity, list, name] of steps) {
        // Batch by batch: batches of 1 to 200 records, every job after each commit.
        for (let i = 0; i < list.length;) {
          const size = 1 + Math.floor(random() * 200);
          const records = list.slice(i, i + size).map((value, k) => ({ position: i + k + 1, value: { ...value } }));
          await loaders[0]!.load({ partner: PARTNER, variant: 'igaming', entity, runId: `batches-${name}-${i}`, records });
          i += size;
        }
        // In bulk: the same records as one file (its commission evaluations in passes of a few dozen customers, evaluationPass).
        const file = join(dir, `${name}.ndjson`);
        writeFileSync(file, `${list.map((r) => JSON.stringify(r)).join('\n')}\n`);
      }
      process.env.PARTNER_SYNC_EVALUATION_CUSTOMERS = '37';
      try {
        // The month as one `import --customers F --transactions F --activity F` (its groups settle every
        // 700 records, the rest at its end), then the corrections as one `import --entity customers F`.
        const month = await importFiles({ store: b.store, loader: loaders[1]! }, { partner: PARTNER, variant: 'igaming', files: ENTITIES.map((entity) => ({ entity, file: join(dir, `${entity}.ndjson`) })).reverse(), stdin: new PassThrough() });
        assert.deepEqual(month.map((s) => s.entity), ENTITIES, 'loaded in entity order, whatever the order given');
        const corrections = await importFile({ store: b.store, loader: loaders[1]! }, { partner: PARTNER, variant: 'igaming', entity: 'customers', file: join(dir, 'corrections.ndjson'), stdin: new PassThrough() });
        for (const summary of [...month, corrections]) assert.equal(summary.counts.rejected, 0, JSON.stringify(summary.rejects.slice(0, 3)));
      } finally {
        delete process.env.PARTNER_SYNC_EVALUATION_CUSTOMERS;
      }
      assert.deepEqual(await unevaluated(b.store.knex, new Date()), [], 'the import settled everything it loaded');

      const [batchwise, bulk] = [await outcome(a.store), await outcome(b.store)];
      assert.ok((batchwise.flags as unknown[]).length > 0, 'the month raises some fraud flags');
      assert.ok((batchwise.payable as unknown[]).length > 50, 'the month books commissions');
      assert.ok((batchwise.reviewHeld as unknown[]).length > 0, 'some commissions are held for review');
      assert.deepEqual(bulk, batchwise);

      const [check] = await recompute(b.store, plans, { partner: PARTNER, runId: 'check' });
      assert.deepEqual([check?.differences.length, check?.derived], [0, { customer_days: 0, affiliate_months: 0, attributions: 0 }]);
      await rebuildFacts(b.store, PARTNER, 'igaming');
      assert.deepEqual((await outcome(b.store)).report, bulk.report);
    });
  });
}
