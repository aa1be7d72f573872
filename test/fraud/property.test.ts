/**
 * Incremental detection equals a rescan: the same records, loaded in random order and random
 * batch splits through the real Loader with the after-load hooks, leave the same flags (rule,
 * instance, customers, evidence numbers) as a store loaded without detection and then scanned;
 * and a scan of the incremental store changes nothing. Seeded, on every store backend.
 */
import { strict as assert } from 'node:assert';
import { scanFraud } from '../../jobs/fraud.js';
import { listFlags } from '../../src/fraud/flags.js';
import { Loader } from '../../src/pipeline/load.js';
import { createRandom, type Random } from '../../src/sandbox/prng.js';
import type { Store } from '../../src/store/store.js';
import type { Entity, SpecRecord, Variant } from '../../src/types.js';
import { loaderWith, loaderWithEveryJob } from '../support/loader.js';
import { raw } from '../support/records.js';
import { fixedClock, STORES } from '../support/stores.js';
import { bets, cust, fraudFrom, trade, tx } from './harness.js';

const CONFIG = fraudFrom(`
rules:
  cpa_farming: { min_ftds: 3, min_share: 0.4 }
  chargeback_rate: { min_deposits: 4, max_rate: 0.2, confidence_z: 0 }
  ftd_spike: { history_days: 3, min_history_days: 2, multiple: 2, min_ftds: 3 }
  mirrored_pnl: { min_days: 2 }
  copy_trading: { min_days: 2 }
  refund_after_fee: { min_refunds: 2 }
  deposit_cycling: { min_cycles: 2 }
`);

interface Rec { partner: string; variant: Variant; entity: Entity; record: SpecRecord }

const day = (r: Random, from = 1, to = 12) => `2026-11-${String(r.int(from, to)).padStart(2, '0')}`;

function casino(r: Random): Rec[] {
  const out: Rec[] = [];
  const add = (entity: Entity, record: SpecRecord) => out.push({ partner: 'casino', variant: 'igaming', entity, record });
  const affiliates = ['aff-1', 'aff-2', 'aff-3'];
  const emails = ['a@gmail.com', 'A.b+x@gmail.com', 'ab@gmail.com', 'c@example.com', 'd@example.com', 'e@example.com'];
  let n = 0;
  for (let i = 0; i < 36; i++) {
    const id = `c${i}`;
    const c = cust(id, r.pick(affiliates), { email: r.chance(0.5) ? r.pick(emails) : `${id}@example.org`, click_id: r.chance(0.1) ? 'clk-1' : `k${i}`, first_name: 'Ann', last_name: r.pick(['Lee', 'Kim', `x${i}`]), country_code: 'DE', last_modified_date: '2026-11-01T00:00:00Z' });
    add('customers', c);
    // A later version: another affiliate or e-mail (the older never overwrites it, whatever the order).
    if (r.chance(0.2)) add('customers', { ...c, affiliate_id: r.pick(affiliates), email: r.pick(emails), last_modified_date: '2026-11-15T00:00:00Z' });
    const d0 = day(r, 1, 8);
    const ftd = r.pick([20, 22, 25, 60, 150]);
    add('transactions', tx(`t${++n}`, id, 'deposit', ftd, `${d0}T10:00:00Z`, { status: r.chance(0.15) ? 'reversed' : 'approved' }));
    if (r.chance(0.4)) add('transactions', tx(`t${++n}`, id, 'deposit', ftd, `${d0}T11:00:00Z`));
    if (r.chance(0.3)) add('transactions', tx(`t${++n}`, id, 'withdrawal', Math.round(ftd * r.float(0.7, 1)), `${day(r, 2, 10)}T12:00:00Z`));
    if (r.chance(0.3)) add('transactions', tx(`t${++n}`, id, 'bonus', 10, `${d0}T10:30:00Z`));
    if (r.chance(0.3)) add('transactions', tx(`t${++n}`, id, 'withdrawal', r.pick([30, 400]), `${day(r, 2, 10)}T13:00:00Z`));
    if (r.chance(0.1)) add('transactions', tx(`t${++n}`, id, 'adjustment', -ftd, `${day(r)}T09:00:00Z`, { transaction_subtype: 'chargeback' }));
    for (let k = r.int(0, 3); k > 0; k--) add('activity', { ...bets(day(r), id, r.pick([1, 5, 15, 40, 300])), game_type: `g${k}` });
  }
  // A regular player whose rows load most days (in random batches: days become loaded at random
  // moments, and windows that waited for them are judged then); 11-13 is never loaded.
  add('customers', cust('regular', 'aff-1'));
  for (let d = 1; d <= 20; d++) if (d !== 13) add('activity', bets(`2026-11-${String(d).padStart(2, '0')}`, 'regular', 1));
  return out;
}

function prop(r: Random): Rec[] {
  const out: Rec[] = [];
  const add = (entity: Entity, record: SpecRecord) => out.push({ partner: 'prop', variant: 'prop-trading', entity, record });
  const ids = Array.from({ length: 14 }, (_, i) => `p${i}`);
  let n = 0;
  for (const id of ids) {
    add('customers', cust(id, r.pick(['aff-1', 'aff-2']), {
      email: r.chance(0.3) ? 'shared@example.com' : `${id}@example.com`,
      ...(r.chance(0.4) ? { phase: 'funded', last_modified_date: `${day(r, 3, 12)}T00:00:00Z` } : { phase: 'phase_1' }),
    }));
    if (r.chance(0.6)) {
      add('transactions', tx(`f${++n}`, id, 'challenge_fee', 99, '2026-11-02T10:00:00Z'));
      if (r.chance(0.5)) add('transactions', tx(`f${++n}`, id, 'refund', 99, `${day(r, 3, 12)}T10:00:00Z`));
    }
  }
  // Pairs that mirror or copy on some days, noise on others.
  for (let p = 0; p < 5; p++) {
    const [a, b] = r.sample(ids, 2) as [string, string];
    const mirror = r.chance(0.5);
    for (let k = r.int(1, 3); k > 0; k--) {
      const d = day(r);
      const inst = r.pick(['EURUSD', 'XAUUSD', 'NAS100']);
      const pnl = r.pick([150, 400, 1000]);
      add('activity', trade(d, a, inst, 2, pnl));
      add('activity', trade(d, b, inst, 2, mirror ? -pnl + r.pick([0, 10, 200]) : pnl + r.pick([0, 10, 200])));
    }
  }
  for (const id of ids) if (r.chance(0.5)) add('activity', trade(day(r), id, 'US30', r.pick([1, 3]), r.pick([-200, 50, 500])));
  return out;
}

/** Keeps the last record of each key (the batches of a load hold one version of a key). */
function dedupe(recs: Rec[]): Rec[] {
  const keyOf = (x: Rec) => JSON.stringify([x.partner, x.entity, x.record.transaction_id ?? '', x.entity === 'customers' ? [x.record.customer_id, x.record.last_modified_date] : '', x.entity === 'activity' ? [x.record.date, x.record.customer_id, x.record.game_type ?? x.record.instrument] : '']);
  const seen = new Map<string, Rec>();
  for (const x of recs) seen.set(keyOf(x), x);
  return [...seen.values()];
}

async function snapshot(store: Store): Promise<string[]> {
  return (await listFlags(store.knex)).map((f) => JSON.stringify([f.partner_id, f.rule, f.instance_key, f.customers, f.affiliate_id, f.severity, f.evidence, f.unsupported_since])).sort();
}

/** Loads the records in batches: with `r`, each batch takes the next 1..30 records of a randomly chosen (partner, entity), in the shuffled order. */
async function loadAll(loader: Loader, recs: readonly Rec[], r: Random | undefined): Promise<void> {
  const queues = new Map<string, Rec[]>();
  for (const x of recs) {
    const k = `${x.partner} ${x.entity}`;
    queues.set(k, [...(queues.get(k) ?? []), x]);
  }
  let run = 0;
  while (queues.size > 0) {
    const k = r ? r.pick([...queues.keys()]) : [...queues.keys()][0]!;
    const queue = queues.get(k)!;
    const batch = queue.splice(0, r ? r.int(1, 30) : queue.length);
    if (queue.length === 0) queues.delete(k);
    const first = batch[0]!;
    const result = await loader.load({ partner: first.partner, variant: first.variant, entity: first.entity, runId: `run-${++run}`, records: raw(batch.map((x) => x.record)) });
    assert.equal(result.rejected, 0, JSON.stringify(result.rejects));
  }
}

for (const backend of STORES) {
  describe(`fraud detection: incremental equals a rescan in chunks (${backend.name})`, () => {
    const seeds = backend.name === 'sqlite' ? [3, 19] : [42];
    for (const seed of seeds) {
      it(`seed ${seed}: random batch orders and splits leave the flags a rescan finds; a rescan of them changes nothing`, async () => {
        const r = createRandom(seed);
        const all = dedupe([...casino(r), ...prop(r)]);
        // Incremental: shuffled, in random splits.
        const shuffled = r.sample(all, all.length);
        const inc = await backend.create(fixedClock());
        const scanned = await backend.create(fixedClock());
        try {
          const loader = loaderWithEveryJob(inc.store, { fraud: CONFIG });
          await loadAll(loader, shuffled, r);
          const incremental = await snapshot(inc.store);
          const rules = new Set(incremental.map((f) => (JSON.parse(f) as string[])[1]));
          assert.ok(rules.size >= 6, `the data must form patterns of most rules (got ${[...rules].join(', ')})`);
          if (process.env.FRAUD_PROPERTY_VERBOSE) console.log(seed, [...rules].sort().join(' '), incremental.length);

          const again = await scanFraud(inc.store, CONFIG);
          assert.deepEqual(again.map((x) => [x.opened, x.updated, x.withdrawn, x.unsupported]), [[0, 0, 0, 0], [0, 0, 0, 0]], 'a rescan of the incremental store changes nothing');
          assert.deepEqual(await snapshot(inc.store), incremental);

          // Rescan: customers first, then the rest, without detection; then one scan.
          const plain = loaderWith(scanned.store, []);
          const order: Entity[] = ['customers', 'transactions', 'activity'];
          await loadAll(plain, [...all].sort((a, b) => order.indexOf(a.entity) - order.indexOf(b.entity)), undefined);
          // In chunks of 7 customers: each instance is judged last with all its customers' facts.
          await scanFraud(scanned.store, CONFIG, { chunk: 7 });
          assert.deepEqual(await snapshot(scanned.store), incremental);
        } finally {
          await inc.drop();
          await scanned.drop();
        }
      });
    }
  });
}
