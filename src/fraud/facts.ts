/**
 * What detection derives per customer from the customer's own rows, re-derived whenever a batch
 * touches the customer (docs/fraud.md): the first deposit and whether it looks farmed, the days
 * from signup to funded, per day deposits / reversals / refunds after a fee and whether it has
 * activity, and the normalized identity keys. The per-affiliate and per-identity rules read these
 * through indexes, so their cost follows what a batch touched, not the history.
 */
import type { Knex } from 'knex';
import { eachInSlices } from '../yield.js';
import { addDays } from '../kernel/dates.js';
import { RateBook } from '../kernel/fx.js';
import { money, ZERO, type Money } from '../kernel/money.js';
import { fromStoreTimestamp } from '../store/values.js';
import type { Variant } from '../types.js';
import type { RuleSettings } from './config.js';
import { identityKeys, type IdentityKey } from './identity.js';
import { dialectOf, type StatementShape } from '../store/dialect/index.js';
import { arrayLiteral } from '../store/json-insert.js';
import { append } from '../kernel/collections.js';

export interface CustomerRow {
  customer_id: string;
  affiliate_id: string;
  signup_date: string;
  last_modified_date: string | null;
  email: string | null;
  first_name: string | null;
  last_name: string | null;
  country_code: string | null;
  click_id: string | null;
  phase: string | null;
  challenge_type?: string | null;
}

export interface Tx {
  transaction_id: string;
  customer_id: string;
  type: string;
  subtype: string | null;
  status: string;
  at: string;
  day: string;
  /** USD amount (the record's amount_usd, else converted with the day's rate); undefined without a rate. */
  usd: Money | undefined;
}

export interface TradeRow {
  customer_id: string;
  date: string;
  instrument: string;
  currency: string;
  lots: Money;
  pnl: Money;
}

/** A customer's rows as the rules read them. */
export interface CustomerData {
  row: CustomerRow;
  txs: Tx[];
  /**
   * USD wagered per day (total_bets) on the days the rules look at (the windows after the first
   * deposit, each bonus and each deposit: windowsOf); undefined for a day with a bet in a
   * currency without a rate or a row without total_bets. A day without rows of the customer
   * counts as 0 only when it is covered.
   */
  wagering: Map<string, Money | undefined>;
  /**
   * USD the customer won net per day over the same days (wins − total_bets, summed over the day's
   * rows); undefined for a day with a row without wins or total_bets, or without a rate. What a
   * player won explains money withdrawn beyond the deposits (bonus_bust_out).
   */
  winnings?: Map<string, Money | undefined>;
  /**
   * Days whose activity is loaded for the partner (some customer of the partner has activity that
   * day), at least over those windows; one set shared by the customers read together. A day not
   * covered has unknown wagering, not zero.
   */
  covered: ReadonlySet<string>;
  /** The first and last uncovered day of the windows that could not be judged (deferred until covered). */
  pending?: [string, string];
}

export type Judgement = { verdict: 'below' | 'enough'; wagered: Money } | { verdict: 'unknown' };

/**
 * Wagering over the days [from, to] against `limit`: enough as soon as the known days reach it
 * (more days only add to it); below only when every day is covered and has known amounts; else
 * unknown, and the uncovered days are noted in data.pending (judged again once they are loaded).
 */
export function judgeWagering(data: CustomerData, from: string, to: string, limit: Money): Judgement {
  let total = ZERO;
  let unknownAmount = false;
  for (const [d, usd] of data.wagering) {
    if (d < from || d > to) continue;
    if (usd === undefined) unknownAmount = true;
    else total = total.plus(usd);
  }
  if (!total.lessThan(limit)) return { verdict: 'enough', wagered: total };
  const missing: string[] = [];
  for (let d = from; d <= to; d = addDays(d, 1)) if (!data.covered.has(d)) missing.push(d);
  if (missing.length > 0) {
    const [first, last] = [missing[0]!, missing[missing.length - 1]!];
    data.pending = data.pending ? [first < data.pending[0] ? first : data.pending[0], last > data.pending[1] ? last : data.pending[1]] : [first, last];
    return { verdict: 'unknown' };
  }
  if (unknownAmount) return { verdict: 'unknown' };
  return { verdict: 'below', wagered: total };
}

export interface Facts {
  customer_id: string;
  affiliate_id: string;
  signup_date: string;
  ftd_date: string | null;
  ftd_usd: string | null;
  farmed: number | null;
  funded_days: number | null;
  /** Prop trading: a challenge bought as instant funding is funded on purchase (not judged by fast_funding). */
  instant: boolean;
  days: { date: string; deposits: number; reversals: number; refunds: number }[];
  identities: IdentityKey[];
}

const CHUNK = 400;

/** The rows of `work` run on each statement's part of `values` (the dialect's chunks), in order. */
export async function chunked<T, R>(db: Knex, values: readonly T[], shape: number | StatementShape, work: (chunk: T[]) => Promise<R[]>): Promise<R[]> {
  const out: R[] = [];
  // No spread: a chunk's rows can be more than a call's arguments may be (a busy instrument-day).
  for (const part of dialectOf(db).chunks(values, shape)) for (const r of await work(part)) out.push(r);
  return out;
}

/** A stored date-time (a driver's Date or a store's text) in the store's UTC form (fromStoreTimestamp: no second parse of a Date's ISO text). */
export const ts = (v: unknown): string => fromStoreTimestamp(v) as string;
const day = (v: unknown): string => (v instanceof Date ? v.toISOString() : String(v)).slice(0, 10);

/** Rows converted between two turns of the event loop (a bulk settle reads a group's every transaction: see eachInSlices). */
const ROWS_A_SLICE = 2_000;

const NO_DAYS: ReadonlySet<string> = new Set();

/**
 * A stored transaction whose USD amount is worked out when a rule first asks for it: the rules
 * read the amounts of first deposits, bonuses and the deposits and withdrawals around them, and a
 * month's settle parsed (and collected) all of its 93,000 amounts.
 */
class StoredTx implements Tx {
  #usd: Money | undefined | null = null;

  constructor(
    public transaction_id: string, public customer_id: string, public type: string, public subtype: string | null,
    public status: string, public at: string, public day: string,
    private readonly amountUsd: unknown, private readonly amount: unknown, private readonly currency: string, private readonly rates: RateBook,
  ) {}

  /** The record's amount_usd, else its amount converted with the day's rate; undefined without a rate. */
  get usd(): Money | undefined {
    if (this.#usd === null) {
      if (this.amountUsd != null) this.#usd = money(this.amountUsd);
      else {
        const c = this.rates.convert(money(this.amount), this.currency, this.day);
        this.#usd = 'usd' in c ? c.usd : undefined;
      }
    }
    return this.#usd;
  }
}

/** Reads the rows of these customers (one query per table per chunk). */
export async function loadCustomerData(db: Knex | Knex.Transaction, partner: string, variant: Variant, ids: readonly string[], settings: RuleSettings | undefined, options: { rowsOnly?: boolean } = {}): Promise<Map<string, CustomerData>> {
  const out = new Map<string, CustomerData>();
  const rows = await chunked(db, ids, { form: 'inList' }, (c) => db('customers').where('partner_id', partner).modify(dialectOf(db).inList('customer_id', c))
    .select('customer_id', 'affiliate_id', 'signup_date', 'last_modified_date', 'email', 'first_name', 'last_name', 'country_code', 'click_id', 'phase', ...(variant === 'prop-trading' ? ['challenge_type'] : [])) as Promise<Record<string, unknown>[]>);
  for (const r of rows) {
    const row = { ...(r as unknown as CustomerRow), signup_date: ts(r.signup_date), last_modified_date: r.last_modified_date == null ? null : ts(r.last_modified_date) };
    out.set(row.customer_id, { row, txs: [], wagering: new Map(), covered: NO_DAYS });
  }
  if (options.rowsOnly) return out;
  const present = [...out.keys()];
  const txRows = await chunked(db, present, { form: 'inList' }, (c) => db('transactions').where('partner_id', partner).modify(dialectOf(db).inList('customer_id', c))
    .select('transaction_id', 'customer_id', 'transaction_type', 'transaction_subtype', 'status', 'transaction_date', 'amount_currency', 'currency', 'amount_usd') as Promise<Record<string, unknown>[]>);
  const pairs: [string, string][] = [];
  for (const t of txRows) if (t.amount_usd == null) pairs.push([String(t.currency), ts(t.transaction_date).slice(0, 10)]);
  let rates = await RateBook.load(db as Knex, pairs);
  const txRates = rates;
  await eachInSlices(txRows, ROWS_A_SLICE, (t) => {
    const data = out.get(String(t.customer_id));
    if (!data) return;
    const at = ts(t.transaction_date);
    // `at` is UTC already: its day is its first ten characters.
    const d = at.slice(0, 10);
    data.txs.push(new StoredTx(String(t.transaction_id), String(t.customer_id), String(t.transaction_type), t.transaction_subtype == null ? null : String(t.transaction_subtype), String(t.status), at, d,
      t.amount_usd, t.amount_currency, String(t.currency), txRates));
  });
  for (const data of out.values()) data.txs.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.transaction_id < b.transaction_id ? -1 : a.transaction_id > b.transaction_id ? 1 : 0));
  if (variant !== 'igaming' || !settings) return out;
  // Wagering of the windows the rules read only: the cost follows the customer's transactions, not its history of days.
  const ranges: { customer: string; from: string; to: string }[] = [];
  for (const data of out.values()) for (const [from, to] of windowsOf(data, settings)) ranges.push({ customer: data.row.customer_id, from, to });
  const activity = await readWindows(db, partner, ranges);
  // One set for all: the rules ask only about days of the windows (a set per customer cost a Set
  // entry and a date string per customer and window day, some 700,000 in a month's settle).
  const covered = await coveredDays(db, partner, ranges);
  for (const data of out.values()) data.covered = covered;
  const cells = new Map<string, Record<string, unknown>>();
  for (const a of activity) cells.set(`${String(a.customer_id)}\u0000${day(a.date)}\u0000${String(a.game_type)}\u0000${String(a.currency)}`, a);
  rates = await RateBook.load(db as Knex, [...pairs, ...[...cells.values()].filter((a) => a.total_bets != null).map((a): [string, string] => [String(a.currency), day(a.date)])]);
  await eachInSlices(cells.values(), ROWS_A_SLICE, (a) => {
    const data = out.get(String(a.customer_id));
    if (!data) return;
    const d = day(a.date);
    const winnings = (data.winnings ??= new Map());
    const won = a.total_bets == null || a.wins == null ? undefined : rates.convert(money(a.wins).minus(money(a.total_bets)), String(a.currency), d);
    const wonBefore = winnings.has(d) ? winnings.get(d) : ZERO;
    winnings.set(d, wonBefore === undefined || won === undefined || !('usd' in won) ? undefined : wonBefore.plus(won.usd));
    if (a.total_bets == null) {
      // total_bets is optional (spec §2.3): a day with a row without it has unknown wagering.
      data.wagering.set(d, undefined);
      return;
    }
    const c = rates.convert(money(a.total_bets), String(a.currency), d);
    const before = data.wagering.has(d) ? data.wagering.get(d) : ZERO;
    data.wagering.set(d, before === undefined || !('usd' in c) ? undefined : before.plus(c.usd));
  });
  return out;
}

/**
 * The gaming activity rows of these customers' windows. PostgreSQL: one statement per 1000
 * windows, the windows as array parameters joined LATERAL to a range scan each (a bulk run's
 * group has thousands of distinct windows: a query per distinct range was hundreds of statements
 * a month, bench/README.md, the whole pipeline). SQLite: one indexed query per distinct range and 500 customers (a batch's
 * windows mostly share their days, its transactions being of a few days).
 */
async function readWindows(db: Knex | Knex.Transaction, partner: string, ranges: readonly { customer: string; from: string; to: string }[]): Promise<Record<string, unknown>[]> {
  const activity: Record<string, unknown>[] = [];
  const dialect = dialectOf(db);
  if (dialect.batchParameters) {
    for (const part of dialect.chunks(ranges, 1000)) {
      const result = (await db.raw(`SELECT a.customer_id, a.date, a.game_type, a.currency, a.total_bets, a.wins
        FROM unnest(?::text[], ?::date[], ?::date[]) AS w(customer_id, since, until)
        CROSS JOIN LATERAL (SELECT g.customer_id, g.date, g.game_type, g.currency, g.total_bets, g.wins FROM gaming_activity g
          WHERE g.partner_id = ? AND g.customer_id = w.customer_id AND g.date >= w.since AND g.date <= w.until) a`,
      [arrayLiteral(part.map((r) => r.customer)), arrayLiteral(part.map((r) => r.from)), arrayLiteral(part.map((r) => r.to)), partner] as Knex.RawBinding[])) as { rows: Record<string, unknown>[] };
      for (const r of result.rows) activity.push(r);
    }
    return activity;
  }
  const byRange = new Map<string, string[]>();
  for (const r of ranges) {
    const key = `${r.from}|${r.to}`;
    const list = byRange.get(key);
    if (list) list.push(r.customer);
    else byRange.set(key, [r.customer]);
  }
  for (const [range, customers] of byRange) {
    const [from, to] = range.split('|') as [string, string];
    const rows = await chunked(db, customers, 500, (c) => db('gaming_activity').where('partner_id', partner).whereIn('customer_id', c).whereBetween('date', [from, to])
      .select('customer_id', 'date', 'game_type', 'currency', 'total_bets', 'wins') as Promise<Record<string, unknown>[]>);
    for (const r of rows) activity.push(r);
  }
  return activity;
}

/** The days from the first of these ranges to the last whose activity is loaded for the partner (fraud_loaded_days), in one range read. */
async function coveredDays(db: Knex | Knex.Transaction, partner: string, ranges: readonly { from: string; to: string }[]): Promise<Set<string>> {
  const out = new Set<string>();
  if (ranges.length === 0) return out;
  let { from, to } = ranges[0]!;
  for (const r of ranges) {
    if (r.from < from) from = r.from;
    if (r.to > to) to = r.to;
  }
  for (const r of await db('fraud_loaded_days').where('partner_id', partner).whereBetween('date', [from, to]).select('date') as { date: string }[]) out.add(r.date);
  return out;
}

/**
 * The day ranges whose wagering the rules can judge, merged: after a first deposit in cpa_farming's
 * baseline band, after a bonus followed by a withdrawal within bonus_bust_out's days, after a
 * deposit followed by one within deposit_cycling's days. The rules judge no other window (a
 * month's settle read 112,788 activity rows for a window after every deposit and bonus).
 */
export function windowsOf(data: Pick<CustomerData, 'txs'>, settings: RuleSettings): [string, string][] {
  const ranges: [string, string][] = [];
  const txs = data.txs.filter(approved);
  // In time order, as the transactions: the first withdrawal on or after a deposit's day (after a
  // bonus's time) is the one that can fall in its window; the cursors only move forward.
  const withdrawals = txs.filter((t) => t.type === 'withdrawal');
  let byDay = 0;
  let byTime = 0;
  let ftdSeen = false;
  for (const t of txs) {
    if (t.type === 'deposit') {
      if (!ftdSeen && t.usd !== undefined && atBaseline(t.usd, settings.cpa_farming)) ranges.push([t.day, addDays(t.day, settings.cpa_farming.within_days - 1)]);
      ftdSeen = true;
      const until = addDays(t.day, settings.deposit_cycling.within_days);
      while (byDay < withdrawals.length && withdrawals[byDay]!.day < t.day) byDay += 1;
      if (byDay < withdrawals.length && withdrawals[byDay]!.day <= until) ranges.push([t.day, until]);
    }
    if (t.type === 'bonus') {
      const limitAt = Date.parse(t.at) + settings.bonus_bust_out.within_days * 86_400_000;
      while (byTime < withdrawals.length && withdrawals[byTime]!.at <= t.at) byTime += 1;
      if (byTime < withdrawals.length && Date.parse(withdrawals[byTime]!.at) <= limitAt) ranges.push([t.day, addDays(t.day, settings.bonus_bust_out.within_days)]);
    }
  }
  ranges.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const merged: [string, string][] = [];
  for (const r of ranges) {
    const last = merged[merged.length - 1];
    if (last && r[0] <= addDays(last[1], 1)) { if (r[1] > last[1]) last[1] = r[1]; } else merged.push([r[0], r[1]]);
  }
  return merged;
}

/** A first deposit at cpa_farming's baseline: within [baseline, baseline × (1 + margin)] USD. */
function atBaseline(usd: Money, s: RuleSettings['cpa_farming']): boolean {
  let band = BANDS.get(s);
  if (!band) {
    const base = money(s.baseline_usd);
    BANDS.set(s, (band = [base, base.times(money(1).plus(s.margin))]));
  }
  return usd.greaterThanOrEqualTo(band[0]) && usd.lessThanOrEqualTo(band[1]);
}

/** The baseline band of each settings object (twice a customer otherwise: four decimals each time). */
const BANDS = new WeakMap<RuleSettings['cpa_farming'], [Money, Money]>();

export const approved = (t: Tx): boolean => t.status.toLowerCase() === 'approved';
const isChargeback = (t: Tx): boolean => t.type === 'adjustment' && (t.subtype ?? '').toLowerCase() === 'chargeback';

export function deriveFacts(data: CustomerData, variant: Variant, settings: RuleSettings): Facts {
  const { row } = data;
  const days = new Map<string, { deposits: number; reversals: number; refunds: number }>();
  const dayOf = (d: string) => {
    let v = days.get(d);
    if (!v) days.set(d, (v = { deposits: 0, reversals: 0, refunds: 0 }));
    return v;
  };
  let ftd: Tx | undefined;
  let feeSeen = false;
  for (const t of data.txs) {
    const status = t.status.toLowerCase();
    if (variant === 'igaming') {
      if (t.type === 'deposit' && (status === 'approved' || status === 'reversed')) dayOf(t.day).deposits += 1;
      if ((t.type === 'deposit' && status === 'reversed') || isChargeback(t)) dayOf(t.day).reversals += 1;
      if (!ftd && t.type === 'deposit' && status === 'approved') ftd = t;
    } else {
      // A prop-trading customer's money in is its challenge fees: counted as its deposits of the day.
      if (t.type === 'challenge_fee' && status === 'approved') { feeSeen = true; dayOf(t.day).deposits += 1; }
      else if (t.type === 'refund' && status === 'approved' && feeSeen) dayOf(t.day).refunds += 1;
    }
  }
  let farmed: number | null = null;
  if (ftd && ftd.usd !== undefined) {
    const s = settings.cpa_farming;
    if (!atBaseline(ftd.usd, s)) farmed = 0;
    else {
      const j = judgeWagering(data, ftd.day, addDays(ftd.day, s.within_days - 1), ftd.usd.times(s.wagering_multiple));
      farmed = j.verdict === 'unknown' ? null : j.verdict === 'below' ? 1 : 0;
    }
  }
  let fundedDays: number | null = null;
  if (variant === 'prop-trading' && row.phase === 'funded' && row.last_modified_date) {
    fundedDays = (Date.parse(row.last_modified_date) - Date.parse(row.signup_date)) / 86_400_000;
  }
  return {
    customer_id: row.customer_id,
    affiliate_id: row.affiliate_id,
    signup_date: row.signup_date,
    ftd_date: ftd ? ftd.day : null,
    ftd_usd: ftd && ftd.usd !== undefined ? ftd.usd.toFixed() : null,
    farmed,
    funded_days: fundedDays,
    instant: (row.challenge_type ?? '').toLowerCase() === 'instant_funding',
    days: [...days].filter(([, v]) => v.deposits + v.reversals + v.refunds > 0).map(([date, v]) => ({ date, ...v })).sort((a, b) => (a.date < b.date ? -1 : 1)),
    identities: identityKeys(row, settings.duplicate_identity.gmail_dots, settings.duplicate_identity.name_key),
  };
}

/** The stored facts of these customers (before a batch re-derives them). */
export interface StoredFacts {
  customers: { customer_id: string; affiliate_id: string; ftd_date: string | null }[];
  days: { customer_id: string; affiliate_id: string; date: string; deposits: number; reversals: number; refunds: number }[];
  identities: (IdentityKey & { customer_id: string })[];
  /** Per customer, what its stored facts are: compared with the new ones to see what changed. */
  signatures: Map<string, Signature>;
}

/** A customer's facts in comparable form: its row (with the pending days), its days, its identity keys. */
export interface Signature { who: string; row: string; days: string; identities: string }

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const rowSignature = (r: { affiliate_id: unknown; signup_date: unknown; ftd_date: unknown; ftd_usd: unknown; farmed: unknown; funded_days: unknown; pending_from: unknown; pending_to: unknown }): string =>
  JSON.stringify([r.affiliate_id, r.signup_date ?? null, r.ftd_date ?? null, r.ftd_usd ?? null, num(r.farmed), num(r.funded_days), r.pending_from ?? null, r.pending_to ?? null]);
const daysSignature = (days: readonly { affiliate_id: string; date: string; deposits: number; reversals: number; refunds: number }[]): string =>
  days.map((d) => `${d.affiliate_id}|${d.date}|${d.deposits}|${d.reversals}|${d.refunds}`).sort().join(',');
const identitiesSignature = (keys: readonly IdentityKey[]): string => keys.map((k) => `${k.kind}|${k.value}`).sort().join(',');

/** The signature of freshly derived facts (with the pending days of its windows). */
export function signatureOf(f: Facts, pending: [string, string] | undefined): Signature {
  return {
    who: JSON.stringify([f.affiliate_id, f.signup_date]),
    row: rowSignature({ ...f, pending_from: pending?.[0] ?? null, pending_to: pending?.[1] ?? null }),
    days: daysSignature(f.days.map((d) => ({ ...d, affiliate_id: f.affiliate_id }))),
    identities: identitiesSignature(f.identities),
  };
}

export async function readFacts(db: Knex | Knex.Transaction, partner: string, ids: readonly string[]): Promise<StoredFacts> {
  const customers = await chunked(db, ids, { form: 'inList' }, (c) => db('fraud_customers').where('partner_id', partner).modify(dialectOf(db).inList('customer_id', c))
    .select('customer_id', 'affiliate_id', 'signup_date', 'ftd_date', 'ftd_usd', 'farmed', 'funded_days', 'pending_from', 'pending_to') as Promise<Record<string, unknown>[]>);
  const days = (await chunked(db, ids, { form: 'inList' }, (c) => db('fraud_customer_days').where('partner_id', partner).modify(dialectOf(db).inList('customer_id', c)).select('customer_id', 'affiliate_id', 'date', 'deposits', 'reversals', 'refunds') as Promise<Record<string, unknown>[]>))
    .map((d) => ({ ...(d as unknown as StoredFacts['days'][number]), deposits: Number(d.deposits), reversals: Number(d.reversals), refunds: Number(d.refunds) }));
  const identities = await chunked(db, ids, { form: 'inList' }, (c) => db('fraud_identities').where('partner_id', partner).modify(dialectOf(db).inList('customer_id', c)).select('customer_id', 'kind', 'value') as Promise<(IdentityKey & { customer_id: string })[]>);
  const signatures = new Map<string, Signature>();
  const daysOf = new Map<string, StoredFacts['days']>();
  for (const d of days) append(daysOf, d.customer_id, d);
  const keysOf = new Map<string, IdentityKey[]>();
  for (const k of identities) append(keysOf, k.customer_id, k);
  for (const r of customers) {
    const id = String(r.customer_id);
    signatures.set(id, { who: JSON.stringify([r.affiliate_id, r.signup_date ?? null]), row: rowSignature(r as Parameters<typeof rowSignature>[0]), days: daysSignature(daysOf.get(id) ?? []), identities: identitiesSignature(keysOf.get(id) ?? []) });
  }
  return { customers: customers as unknown as StoredFacts['customers'], days, identities, signatures };
}

/** The customers with rows in each facts table, of stored facts read in the same transaction. */
export function storedCustomers(stored: StoredFacts): { row: Set<string>; days: Set<string>; identities: Set<string> } {
  return {
    row: new Set(stored.customers.map((c) => String(c.customer_id))),
    days: new Set(stored.days.map((d) => d.customer_id)),
    identities: new Set(stored.identities.map((k) => k.customer_id)),
  };
}

/**
 * Replaces the stored facts of these customers (a customer no longer in the store loses its
 * facts): per table only for the customers whose part changed (all three without `changed`).
 * With `stored` (storedCustomers of the facts read in this transaction), a table's old rows are
 * deleted only for the customers that have some: a bulk group's new customers have none, and a
 * delete per 400 of them found nothing (bench/README.md, the whole pipeline).
 */
export async function writeFacts(trx: Knex.Transaction, partner: string, ids: readonly string[], allFacts: readonly Facts[], pending: ReadonlyMap<string, [string, string] | undefined> = new Map(),
  changed?: { row: ReadonlySet<string>; days: ReadonlySet<string>; identities: ReadonlySet<string> },
  stored?: { row: ReadonlySet<string>; days: ReadonlySet<string>; identities: ReadonlySet<string> }): Promise<void> {
  const parts = [['fraud_customers', changed?.row, stored?.row], ['fraud_customer_days', changed?.days, stored?.days], ['fraud_identities', changed?.identities, stored?.identities]] as const;
  for (const [table, set, had] of parts) {
    const list = ids.filter((id) => (!set || set.has(id)) && (!had || had.has(id)));
    await chunked(trx, list, CHUNK, async (c) => [await trx(table).where('partner_id', partner).whereIn('customer_id', c).delete()]);
  }
  const only = (set: ReadonlySet<string> | undefined) => (set ? allFacts.filter((f) => set.has(f.customer_id)) : allFacts);
  const facts = only(changed?.row);
  // PostgreSQL: one statement per table, an array parameter per column, filled straight from the
  // facts (a bulk run's group writes tens of thousands of rows: no row objects in between).
  const dialect = dialectOf(trx);
  await dialect.insertColumns(trx, 'fraud_customers', { partner_id: ['text', partner] }, {
    customer_id: ['text', facts.map((f) => f.customer_id)], affiliate_id: ['text', facts.map((f) => f.affiliate_id)],
    signup_date: ['text', facts.map((f) => f.signup_date)], ftd_date: ['text', facts.map((f) => f.ftd_date)], ftd_usd: ['text', facts.map((f) => f.ftd_usd)],
    farmed: ['integer', facts.map((f) => f.farmed)], funded_days: ['float8', facts.map((f) => f.funded_days)],
    pending_from: ['text', facts.map((f) => pending.get(f.customer_id)?.[0] ?? null)], pending_to: ['text', facts.map((f) => pending.get(f.customer_id)?.[1] ?? null)],
  });
  const days = { customer_id: [] as string[], affiliate_id: [] as string[], date: [] as string[], deposits: [] as number[], reversals: [] as number[], refunds: [] as number[] };
  for (const f of only(changed?.days)) {
    for (const d of f.days) {
      days.customer_id.push(f.customer_id);
      days.affiliate_id.push(f.affiliate_id);
      days.date.push(d.date);
      days.deposits.push(d.deposits);
      days.reversals.push(d.reversals);
      days.refunds.push(d.refunds);
    }
  }
  await dialect.insertColumns(trx, 'fraud_customer_days', { partner_id: ['text', partner] }, {
    customer_id: ['text', days.customer_id], affiliate_id: ['text', days.affiliate_id], date: ['text', days.date],
    deposits: ['integer', days.deposits], reversals: ['integer', days.reversals], refunds: ['integer', days.refunds],
  });
  const keys = { customer_id: [] as string[], kind: [] as string[], value: [] as string[] };
  for (const f of only(changed?.identities)) {
    for (const k of f.identities) {
      keys.customer_id.push(f.customer_id);
      keys.kind.push(k.kind);
      keys.value.push(k.value);
    }
  }
  await dialect.insertColumns(trx, 'fraud_identities', { partner_id: ['text', partner] }, { customer_id: ['text', keys.customer_id], kind: ['text', keys.kind], value: ['text', keys.value] });
}
