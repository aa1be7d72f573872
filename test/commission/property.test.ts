/**
 * Property: the same records (each in its final version) loaded in a random order and random
 * batch splits, with transactions and activity often arriving before their customer, give the
 * same ledger (net per key and affiliate) as one batch per entity, and recompute agrees with the
 * incremental ledger. With rates missing, the same once the rates arrive. Several seeds per store.
 */
import assert from 'node:assert/strict';
import { addDays } from '../../src/kernel/dates.js';
import { createRandom, type Random } from '../../src/sandbox/prng.js';
import type { Entity, SpecRecord, Variant } from '../../src/types.js';
import { STORES } from '../support/stores.js';
import { harness, type Harness } from './harness.js';

const PLANS = `
plans:
  - id: cpa
    kind: cpa_ftd
    partner: casino
    affiliates: all
    effective: { from: 2026-01-01 }
    qualification:
      window_days: 30
      min_first_deposit_usd: 20
      cumulative_deposits: { min_usd: 50, within_days: 14 }
      wagering: { min_usd: 100, within_days: 30 }
    amount_usd: { default: 100, by_country: { DE: 150 } }
  - id: revshare
    kind: revshare
    partner: casino
    affiliates: [aff-1, aff-2]
    effective: { from: 2026-09-01 }
    revenue: ngr
    tiers: { mode: ladder, bands: [{ from_usd: 0, rate: 0.25 }, { from_usd: 300, rate: 0.35 }] }
    negative_carryover: true
  - id: fees
    kind: challenge_cpa
    partner: firm
    affiliates: all
    effective: { from: 2026-01-01 }
    include_reset_fee: true
    rates: [{ challenge_type: [rapid], rate: 0.15 }, { account_size: { min_usd: 100000 }, rate: 0.12 }, { rate: 0.1 }]
  - id: funded
    kind: phase_bonus
    partner: firm
    affiliates: all
    effective: { from: 2026-01-01 }
    phase: funded
    amount_usd: 40
`;

interface Event {
  partner: string;
  variant: Variant;
  entity: Entity;
  record: SpecRecord;
}

const money2 = (r: Random, min: number, max: number) => r.int(min * 100, max * 100) / 100;
const day = (r: Random, from: string, span: number) => addDays(from, r.int(0, span));
const at = (d: string, r: Random) => `${d}T${String(r.int(0, 23)).padStart(2, '0')}:${String(r.int(0, 59)).padStart(2, '0')}:00Z`;
/** EUR rates exist for every day of Sep–Nov 2026 except every ninth: entries needing them stay held. */
const NO_RATE = new Set(Array.from({ length: 10 }, (_, k) => addDays('2026-09-05', 9 * k)));

function events(seed: number): Event[] {
  const r = createRandom(seed);
  const out: Event[] = [];
  const ig = (entity: Entity, record: SpecRecord) => out.push({ partner: 'casino', variant: 'igaming', entity, record });
  for (let c = 0; c < 20; c++) {
    const id = `c${c}`;
    const signup = day(r, '2026-09-01', 45);
    ig('customers', { customer_id: id, signup_date: at(signup, r), affiliate_id: r.pick(['aff-1', 'aff-2', 'aff-3']), country_code: r.pick(['GB', 'DE', 'FR']) });
    const deposits: string[] = [];
    for (let d = 0; d < r.int(0, 4); d++) {
      const tid = `${id}-d${d}`;
      const eur = r.chance(0.3);
      const amount = money2(r, 5, 120);
      deposits.push(tid);
      ig('transactions', {
        transaction_id: tid, customer_id: id, transaction_type: 'deposit', amount_currency: amount, currency: eur ? 'EUR' : 'USD',
        ...(eur && r.chance(0.5) ? { amount_usd: money2(r, 5, 130) } : {}),
        transaction_date: at(day(r, signup, 20), r), status: r.weighted([['approved', 70], ['declined', 10], ['reversed', 10], ['pending', 10]]),
      });
    }
    if (deposits.length > 0 && r.chance(0.2)) {
      ig('transactions', { transaction_id: `${id}-cb`, customer_id: id, transaction_type: 'adjustment', transaction_subtype: 'chargeback', amount_currency: -50, currency: 'USD', transaction_date: at(day(r, addDays(signup, 21), 10), r), status: 'approved', note: `chargeback of ${r.pick(deposits)}` });
    }
    const days = r.sample(Array.from({ length: 85 }, (_, i) => addDays('2026-09-01', i)), r.int(2, 16));
    for (const d of days) {
      const eur = r.chance(0.25);
      const currency = eur ? 'EUR' : 'USD';
      const bets = money2(r, 0, 400);
      const wins = Math.round(bets * r.float(0.5, 1.15) * 100) / 100;
      const row: SpecRecord = { date: d, customer_id: id, game_type: r.pick(['slots', 'poker']), currency, total_bets: bets, wins };
      if (r.chance(0.4)) row.ggr = Math.round((bets - wins) * 100) / 100;
      if (r.chance(0.3)) row.ngr = money2(r, -60, 200);
      ig('activity', row);
      if (r.chance(0.3)) {
        ig('transactions', { transaction_id: `${id}-b${d}`, customer_id: id, transaction_type: 'bonus', amount_currency: money2(r, 1, 40), currency, transaction_date: at(d, r), status: r.pick(['approved', 'approved', 'declined']) });
      }
    }
  }
  const pt = (entity: Entity, record: SpecRecord) => out.push({ partner: 'firm', variant: 'prop-trading', entity, record });
  for (let c = 0; c < 8; c++) {
    const id = `t${c}`;
    const signup = day(r, '2026-09-01', 40);
    pt('customers', {
      customer_id: id, signup_date: at(signup, r), affiliate_id: r.pick(['aff-1', 'aff-2']), challenge_type: r.pick(['standard', 'rapid']),
      account_size: r.pick([25000, 100000, 200000]), phase: r.pick(['phase_1', 'phase_2', 'funded', 'failed']),
    });
    const fees: string[] = [];
    for (let f = 0; f < r.int(1, 3); f++) {
      const fid = `${id}-f${f}`;
      fees.push(fid);
      const eur = r.chance(0.3);
      pt('transactions', { transaction_id: fid, customer_id: id, transaction_type: f === 0 ? 'challenge_fee' : 'reset_fee', amount_currency: money2(r, 50, 600), currency: eur ? 'EUR' : 'USD', transaction_date: at(day(r, signup, 30), r), status: r.weighted([['approved', 80], ['reversed', 10], ['declined', 10]]) });
    }
    if (r.chance(0.4)) {
      pt('transactions', { transaction_id: `${id}-r`, customer_id: id, transaction_type: 'refund', amount_currency: money2(r, 10, 700), currency: 'USD', transaction_date: at(day(r, addDays(signup, 10), 30), r), status: 'approved', ...(r.chance(0.5) ? { note: `refund of ${r.pick(fees)}` } : {}) });
    }
  }
  return out;
}

function ratesCsv(all: boolean): string {
  const lines = ['date,currency,rate'];
  for (let i = 0; i < 91; i++) {
    const d = addDays('2026-09-01', i);
    if (all || !NO_RATE.has(d)) lines.push(`${d},EUR,1.${String(1000 + ((i * 37) % 300)).slice(1)}`);
  }
  return lines.join('\n');
}

type Load = { partner: string; variant: Variant; entity: Entity; records: SpecRecord[] };

async function loadAll(h: Harness, loads: readonly Load[]): Promise<void> {
  for (const l of loads) await h.load(l.entity, l.records, { partner: l.partner, variant: l.variant });
}

/** One batch per partner and entity, customers first. */
function oneBatch(evts: readonly Event[]): Load[] {
  const out: Load[] = [];
  for (const partner of ['casino', 'firm']) {
    for (const entity of ['customers', 'transactions', 'activity'] as const) {
      const records = evts.filter((e) => e.partner === partner && e.entity === entity).map((e) => e.record);
      const variant = evts.find((e) => e.partner === partner)?.variant as Variant;
      if (records.length > 0) out.push({ partner, variant, entity, records });
    }
  }
  return out;
}

/** The same records shuffled, cut into random runs, each run loaded as one batch per (partner, entity) in random order. */
function randomBatches(evts: readonly Event[], r: Random): Load[] {
  const shuffled = r.sample(evts, evts.length);
  const out: Load[] = [];
  for (let i = 0; i < shuffled.length;) {
    const size = r.int(1, 30);
    const chunk = shuffled.slice(i, i + size);
    i += size;
    const groups = new Map<string, Load>();
    for (const e of chunk) {
      const k = `${e.partner}/${e.entity}`;
      const g = groups.get(k) ?? { partner: e.partner, variant: e.variant, entity: e.entity, records: [] };
      g.records.push(e.record);
      groups.set(k, g);
    }
    out.push(...r.sample([...groups.values()], groups.size));
  }
  return out;
}

/**
 * Re-sends of loaded transactions that change customer, type, date and amount (the transaction id
 * stays): some to a customer that arrives only afterwards (the record waits, then is released).
 */
function resends(evts: readonly Event[], r: Random): { transactions: Event[]; customers: Event[] } {
  const txs = evts.filter((e) => e.entity === 'transactions');
  const customersOf = (partner: string) => evts.filter((e) => e.partner === partner && e.entity === 'customers').map((e) => String(e.record.customer_id));
  const types: Record<string, string[]> = { casino: ['deposit', 'bonus', 'withdrawal'], firm: ['challenge_fee', 'reset_fee', 'refund'] };
  const out: Event[] = [];
  const late: Event[] = [];
  for (const e of r.sample(txs, Math.min(txs.length, 40))) {
    const record: SpecRecord = { ...e.record };
    if (r.chance(0.5)) {
      if (r.chance(0.2)) {
        const id = `${e.partner}-late-${late.length}`;
        late.push({ ...e, entity: 'customers', record: { customer_id: id, signup_date: '2026-09-03T08:00:00Z', affiliate_id: 'aff-2', ...(e.partner === 'firm' ? { challenge_type: 'standard', account_size: 100000, phase: 'funded' } : { country_code: 'DE' }) } });
        record.customer_id = id;
      } else record.customer_id = r.pick(customersOf(e.partner));
    }
    if (r.chance(0.4)) {
      record.transaction_type = r.pick(types[e.partner] as string[]);
      delete record.transaction_subtype;
    }
    if (r.chance(0.5)) record.transaction_date = at(addDays(String(record.transaction_date).slice(0, 10), r.int(-3, 3)), r);
    if (r.chance(0.4)) record.amount_currency = money2(r, 5, 300);
    out.push({ ...e, record });
  }
  return { transactions: out, customers: late };
}

for (const backend of STORES) {
  describe(`commission property: transactions re-sent with another customer, type, date or amount, on ${backend.name}`, function () {
    this.timeout(180_000);
    for (const seed of [5, 17, 29, 43, 61]) {
      it(`seed ${seed}: the incremental ledger equals a recompute`, async () => {
        const evts = events(seed);
        const h = await harness(backend, PLANS);
        try {
          await h.rates(ratesCsv(true));
          const r = createRandom(seed * 31);
          await loadAll(h, randomBatches(evts, r));
          const before = await h.lines();
          const changed = resends(evts, r);
          // Re-send batches whose customers the loader remembers go straight to the upsert (the
          // direct path); those naming a late customer wait, and are released with it.
          const batches = randomBatches(changed.transactions, r);
          const direct = batches.filter((b) => h.loader.known.remembersCustomers(b.partner, b.records)).length;
          assert.ok(direct > 0 && direct < batches.length, `both paths should be taken (${direct} of ${batches.length} batches direct)`);
          await loadAll(h, batches);
          await loadAll(h, randomBatches(changed.customers, r));
          assert.ok((await h.lines()).length > before.length, 'the re-sends should move commissions');
          await h.agrees();
        } finally {
          await h.drop();
        }
      });
    }
  });

  describe(`commission property: order and batch splits do not change the ledger, on ${backend.name}`, function () {
    this.timeout(180_000);
    for (const seed of [11, 23, 37, 41, 53]) {
      it(`seed ${seed}: every rate present`, async () => {
        const evts = events(seed);
        const single = await harness(backend, PLANS);
        const random = await harness(backend, PLANS);
        try {
          await single.rates(ratesCsv(true));
          await random.rates(ratesCsv(true));
          await loadAll(single, oneBatch(evts));
          await loadAll(random, randomBatches(evts, createRandom(seed * 7919)));
          const expected = await single.net();
          assert.ok(expected.size >= 5, `the scenario should produce commissions (got ${expected.size} keys)`);
          assert.deepEqual(await random.net(), expected);
          assert.deepEqual(await random.holds(), []);
          await random.agrees();
          await single.agrees();
        } finally {
          await single.drop();
          await random.drop();
        }
      });

      it(`seed ${seed}: some rates missing, then arriving`, async () => {
        // While a key is held it keeps what it had booked, so the ledgers may differ in between;
        // once the rates arrive they must be the same.
        const evts = events(seed);
        const single = await harness(backend, PLANS);
        const random = await harness(backend, PLANS);
        try {
          await single.rates(ratesCsv(false));
          await random.rates(ratesCsv(false));
          await loadAll(single, oneBatch(evts));
          await loadAll(random, randomBatches(evts, createRandom(seed * 104729)));
          assert.ok((await single.holds()).length > 0, 'the scenario should hold something for the missing rates');
          await random.agrees();
          await single.agrees();
          const late = ['date,currency,rate', ...[...NO_RATE].map((d) => `${d},EUR,1.0625`)].join('\n');
          await single.rates(late);
          await random.rates(late);
          assert.deepEqual(await single.holds(), []);
          assert.deepEqual(await random.holds(), []);
          assert.deepEqual(await random.net(), await single.net());
          await random.agrees();
        } finally {
          await single.drop();
          await random.drop();
        }
      });
    }
  });
}
