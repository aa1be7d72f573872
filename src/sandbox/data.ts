/**
 * The sandbox partner's data set: per variant, customers, transactions and daily activity,
 * generated deterministically from a seed and a date range, then changeable by tests through the
 * mutation functions (and the `/_sandbox/` endpoints that mirror them).
 *
 * Records are stored frozen and replaced, never edited in place, so a list the server is paging
 * through is not changed under it. Transactions carry `updated_at`, the partner's change time
 * (not a spec field: the connector uses it for delta sync and maps it away).
 *
 * Mutations do not validate records against the spec on purpose: tests add invalid records to
 * exercise the connector's reject path. Only the fields the sandbox keys and sorts on are checked.
 */
import type { SpecRecord, Variant } from '../types.js';
import { VARIANTS } from '../types.js';
import { generationContext, type GeneratedCustomer, type GenerationContext } from './generate-common.js';
import { generateIgamingCustomer } from './generate-igaming.js';
import { generatePropTradingCustomer } from './generate-prop-trading.js';
import { generateFraudPatterns, type InjectedPattern } from './fraud-patterns.js';
import { dayOf, formatDay, instantKey, parseDay } from './instant.js';
import { systemClock } from '../kernel/clock.js';

export const DEFAULT_SEED = 1;
export const DEFAULT_CUSTOMERS = 200;
export const DEFAULT_RANGE_DAYS = 30;

export interface SandboxDataOptions {
  seed?: number;
  /** First day of signups and activity, YYYY-MM-DD (UTC); default: 30 days before the clock's day. */
  from?: string;
  /** Last day (inclusive), YYYY-MM-DD; default: the day before the clock's day. */
  to?: string;
  /** Customers per variant; default 200. */
  customers?: number;
  /** The current time of mutations without an explicit time; default the wall clock. */
  clock?: () => Date;
  /** Labelled fraud patterns (src/sandbox/fraud-patterns.ts): this many instances of each rule, added to the clean customers; default 0. */
  fraudPatterns?: number;
}

/** A stored record with the key it is sorted by (string tuple, compared element by element). */
export interface SortedEntry {
  readonly key: readonly string[];
  readonly record: Readonly<SpecRecord>;
}

/** A transaction entry also keeps the sortable key of its transaction_date (for from/to). */
export interface TransactionEntry extends SortedEntry {
  /** instantKey(transaction_date), undefined when the record's date is not a date-time. */
  readonly dateKey: string | undefined;
}

/** When a mutation happened: a Date, or an ISO date-time string kept as given (any precision). */
export type DateInput = Date | string;

/** The aggregation key of an activity row; `game_type` (iGaming) or `instrument` (prop trading). */
export interface ActivityKey {
  date: string;
  customer_id: string;
  currency: string;
  game_type?: string;
  instrument?: string;
}

export interface SandboxData {
  readonly seed: number;
  /** The generated range, YYYY-MM-DD, both inclusive. */
  readonly from: string;
  readonly to: string;
  /** The injected fraud patterns (empty unless asked for): which customers a flag of which rule should cover. */
  readonly patterns: readonly InjectedPattern[];

  /** Customers sorted by (last_modified_date, customer_id). */
  customers(variant: Variant): readonly Readonly<SpecRecord>[];
  /** Transactions (with updated_at) sorted by (updated_at, transaction_id). */
  transactions(variant: Variant): readonly Readonly<SpecRecord>[];
  /** Activity rows of one day, or of every day, sorted by (date, customer_id, game_type|instrument, currency). */
  activity(variant: Variant, date?: string): readonly Readonly<SpecRecord>[];
  /** The days that have activity rows, ascending. */
  activityDates(variant: Variant): string[];
  customer(variant: Variant, customerId: string): Readonly<SpecRecord> | undefined;
  transaction(variant: Variant, transactionId: string): Readonly<SpecRecord> | undefined;

  /**
   * Adds a customer or merges fields into an existing one; last_modified_date becomes `at` (or
   * the clock's now). `customer_id` (a string) is required. Returns the stored record.
   */
  upsertCustomer(variant: Variant, fields: SpecRecord, at?: DateInput): Readonly<SpecRecord>;
  /** upsertCustomer for each record, all with the same time. */
  addCustomers(variant: Variant, records: readonly SpecRecord[], at?: DateInput): Readonly<SpecRecord>[];
  /** Sets a transaction's status and its updated_at to `at` (or now). Throws for an unknown id. */
  setTransactionStatus(variant: Variant, transactionId: string, status: string, at?: DateInput): Readonly<SpecRecord>;
  /**
   * Adds a transaction or merges fields into an existing one; updated_at becomes `at` (or now).
   * `transaction_id` (a string) is required.
   */
  upsertTransaction(variant: Variant, fields: SpecRecord, at?: DateInput): Readonly<SpecRecord>;
  /** upsertTransaction for each record, all with the same time. */
  addTransactions(variant: Variant, records: readonly SpecRecord[], at?: DateInput): Readonly<SpecRecord>[];
  /** Adds an activity row, or replaces the row with the same aggregation key (the whole day record). */
  putActivity(variant: Variant, row: SpecRecord): 'added' | 'replaced';
  /** putActivity for each row. */
  addActivity(variant: Variant, rows: readonly SpecRecord[]): void;
  /** Deletes the row with this aggregation key; false when there was none. */
  deleteActivity(variant: Variant, key: ActivityKey): boolean;
  /**
   * Hard-deletes a customer or transaction (gone from its list), remembered with the time `at`
   * (or now) for the deleted-ids endpoint; false when there was none.
   */
  deleteRecord(variant: Variant, entity: 'customers' | 'transactions', id: string, at?: DateInput): boolean;
  /** The ids deleted at or after `since` (ISO 8601), oldest first, with when. */
  deletedSince(variant: Variant, entity: 'customers' | 'transactions', since: string): { id: string; deleted_at: string }[];

  /** For the server: sorted entries (shared and frozen: do not change them). */
  customerEntries(variant: Variant): readonly SortedEntry[];
  transactionEntries(variant: Variant): readonly TransactionEntry[];
  activityEntries(variant: Variant, date: string): readonly SortedEntry[];
}

/** The field that completes the activity aggregation key of a variant. */
export function activityKeyField(variant: Variant): 'game_type' | 'instrument' {
  return variant === 'igaming' ? 'game_type' : 'instrument';
}

const GENERATORS: Record<Variant, (ctx: GenerationContext, index: number) => GeneratedCustomer> = {
  igaming: generateIgamingCustomer,
  'prop-trading': generatePropTradingCustomer,
};

export function compareKeys(a: readonly string[], b: readonly string[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i] as string;
    const y = b[i] as string;
    if (x !== y) return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

/** A map of entries kept by id, with its sorted view built on demand after each change. */
class SortedMap<E extends SortedEntry> {
  private readonly byId = new Map<string, E>();
  private sorted: E[] | undefined;

  get(id: string): E | undefined {
    return this.byId.get(id);
  }

  set(id: string, entry: E): 'added' | 'replaced' {
    const had = this.byId.has(id);
    this.byId.set(id, entry);
    this.sorted = undefined;
    return had ? 'replaced' : 'added';
  }

  delete(id: string): boolean {
    const had = this.byId.delete(id);
    if (had) this.sorted = undefined;
    return had;
  }

  get size(): number {
    return this.byId.size;
  }

  entries(): readonly E[] {
    if (this.sorted === undefined) {
      this.sorted = [...this.byId.values()].sort((a, b) => compareKeys(a.key, b.key));
      Object.freeze(this.sorted);
    }
    return this.sorted;
  }
}

interface VariantData {
  customers: SortedMap<SortedEntry>;
  transactions: SortedMap<TransactionEntry>;
  /** Rows per day, keyed within the day by JSON of [customer_id, game_type|instrument, currency]. */
  activity: Map<string, SortedMap<SortedEntry>>;
}

/** Resolves the range: explicit days, or the 30 days before the clock's current day. */
export function resolveRange(options: Pick<SandboxDataOptions, 'from' | 'to'>, now: Date): { fromDay: number; toDay: number } {
  const today = dayOf(now);
  const toDay = options.to === undefined ? today - 1 : parseRangeDay('to', options.to);
  const fromDay = options.from === undefined ? (options.to === undefined ? today - DEFAULT_RANGE_DAYS : toDay - DEFAULT_RANGE_DAYS + 1) : parseRangeDay('from', options.from);
  if (fromDay > toDay) throw new Error(`sandbox data: from ${formatDay(fromDay)} is after to ${formatDay(toDay)}`);
  return { fromDay, toDay };
}

function parseRangeDay(name: string, text: string): number {
  const day = parseDay(text);
  if (day === undefined) throw new Error(`sandbox data: ${name} must be a date YYYY-MM-DD, got ${JSON.stringify(text)}`);
  return day;
}

export function createSandboxData(options: SandboxDataOptions = {}): SandboxData {
  const clock = options.clock ?? systemClock;
  const seed = options.seed ?? DEFAULT_SEED;
  const count = options.customers ?? DEFAULT_CUSTOMERS;
  if (!Number.isInteger(seed)) throw new Error(`sandbox data: seed must be an integer, got ${seed}`);
  if (!Number.isInteger(count) || count < 0) throw new Error(`sandbox data: customers must be a whole number ≥ 0, got ${count}`);
  const { fromDay, toDay } = resolveRange(options, clock());
  const ctx = generationContext(seed, fromDay, toDay);

  const store = new Map<Variant, VariantData>();
  for (const variant of VARIANTS) {
    const data: VariantData = { customers: new SortedMap(), transactions: new SortedMap(), activity: new Map() };
    store.set(variant, data);
    for (let i = 0; i < count; i++) {
      const generated = GENERATORS[variant](ctx, i);
      storeCustomer(data, generated.customer);
      for (const tx of generated.transactions) storeTransaction(data, tx);
      for (const row of generated.activity) storeActivity(variant, data, row);
    }
  }
  const patternSets = options.fraudPatterns ? generateFraudPatterns(ctx, options.fraudPatterns) : [];
  for (const set of patternSets) {
    const data = store.get(set.variant) as VariantData;
    for (const generated of set.generated) {
      storeCustomer(data, generated.customer);
      for (const tx of generated.transactions) storeTransaction(data, tx);
      for (const row of generated.activity) storeActivity(set.variant, data, row);
    }
  }

  const of = (variant: Variant): VariantData => {
    const data = store.get(variant);
    if (data === undefined) throw new Error(`sandbox data: unknown variant ${JSON.stringify(variant)} (variants: ${VARIANTS.join(', ')})`);
    return data;
  };
  const timeText = (at: DateInput | undefined): string => {
    if (at === undefined) return clock().toISOString();
    if (at instanceof Date) return at.toISOString();
    if (instantKey(at) === undefined) throw new Error(`sandbox data: not an ISO 8601 date-time: ${JSON.stringify(at)}`);
    return at;
  };

  function upsertCustomer(variant: Variant, fields: SpecRecord, at?: DateInput): Readonly<SpecRecord> {
    const id = requireString(fields, 'customer_id', 'customer');
    const data = of(variant);
    const merged = { ...(data.customers.get(id)?.record ?? {}), ...fields, last_modified_date: timeText(at) };
    return storeCustomer(data, merged);
  }

  function upsertTransaction(variant: Variant, fields: SpecRecord, at?: DateInput): Readonly<SpecRecord> {
    const id = requireString(fields, 'transaction_id', 'transaction');
    const data = of(variant);
    const merged = { ...(data.transactions.get(id)?.record ?? {}), ...fields, updated_at: timeText(at) };
    return storeTransaction(data, merged);
  }

  function sortedActivity(variant: Variant, date: string): readonly SortedEntry[] {
    return of(variant).activity.get(date)?.entries() ?? [];
  }

  function activityDates(variant: Variant): string[] {
    return [...of(variant).activity.entries()].filter(([, rows]) => rows.size > 0).map(([d]) => d).sort();
  }

  const deletions: { variant: Variant; entity: 'customers' | 'transactions'; id: string; at: string }[] = [];
  return {
    deleteRecord(variant, entity, id, at) {
      const had = of(variant)[entity].delete(id);
      if (had) deletions.push({ variant, entity, id, at: timeText(at) });
      return had;
    },
    deletedSince: (variant, entity, since) => deletions.filter((d) => d.variant === variant && d.entity === entity && Date.parse(d.at) >= Date.parse(since)).map((d) => ({ id: d.id, deleted_at: d.at })),
    seed,
    from: formatDay(fromDay),
    to: formatDay(toDay),
    patterns: patternSets.flatMap((set) => set.patterns),
    customers: (variant) => of(variant).customers.entries().map((e) => e.record),
    transactions: (variant) => of(variant).transactions.entries().map((e) => e.record),
    activity: (variant, date) => (date === undefined ? activityDates(variant) : [date]).flatMap((d) => sortedActivity(variant, d).map((e) => e.record)),
    activityDates,
    customer: (variant, id) => of(variant).customers.get(id)?.record,
    transaction: (variant, id) => of(variant).transactions.get(id)?.record,
    upsertCustomer,
    addCustomers: (variant, records, at) => {
      const when = timeText(at);
      return records.map((r) => upsertCustomer(variant, r, when));
    },
    setTransactionStatus(variant, transactionId, status, at) {
      if (of(variant).transactions.get(transactionId) === undefined) {
        throw new Error(`sandbox data: no ${variant} transaction ${JSON.stringify(transactionId)}`);
      }
      return upsertTransaction(variant, { transaction_id: transactionId, status }, at);
    },
    upsertTransaction,
    addTransactions: (variant, records, at) => {
      const when = timeText(at);
      return records.map((r) => upsertTransaction(variant, r, when));
    },
    putActivity: (variant, row) => storeActivity(variant, of(variant), { ...row }),
    addActivity: (variant, rows) => {
      for (const row of rows) storeActivity(variant, of(variant), { ...row });
    },
    deleteActivity(variant, key) {
      const field = activityKeyField(variant);
      const day = of(variant).activity.get(key.date);
      return day?.delete(activityId(variant, { ...key }, field)) ?? false;
    },
    customerEntries: (variant) => of(variant).customers.entries(),
    transactionEntries: (variant) => of(variant).transactions.entries(),
    activityEntries: sortedActivity,
  };
}

function requireString(record: SpecRecord, field: string, what: string): string {
  const value = record[field];
  if (typeof value !== 'string') throw new Error(`sandbox data: a ${what} needs ${field} (a string), got ${JSON.stringify(value)}`);
  return value;
}

function storeCustomer(data: VariantData, record: SpecRecord): Readonly<SpecRecord> {
  const id = requireString(record, 'customer_id', 'customer');
  const modified = record.last_modified_date;
  const key = [typeof modified === 'string' ? (instantKey(modified) ?? '') : '', id];
  const frozen = Object.freeze(record);
  data.customers.set(id, Object.freeze({ key: Object.freeze(key), record: frozen }));
  return frozen;
}

function storeTransaction(data: VariantData, record: SpecRecord): Readonly<SpecRecord> {
  const id = requireString(record, 'transaction_id', 'transaction');
  const updated = record.updated_at;
  const date = record.transaction_date;
  const key = [typeof updated === 'string' ? (instantKey(updated) ?? '') : '', id];
  const frozen = Object.freeze(record);
  data.transactions.set(id, Object.freeze({
    key: Object.freeze(key),
    record: frozen,
    dateKey: typeof date === 'string' ? instantKey(date) : undefined,
  }));
  return frozen;
}

function activityId(variant: Variant, row: SpecRecord, field: string): string {
  return JSON.stringify(activityKey(variant, row, field));
}

function activityKey(variant: Variant, row: SpecRecord, field: string): string[] {
  return [
    requireString(row, 'customer_id', `${variant} activity row`),
    requireString(row, field, `${variant} activity row`),
    requireString(row, 'currency', `${variant} activity row`),
  ];
}

function storeActivity(variant: Variant, data: VariantData, row: SpecRecord): 'added' | 'replaced' {
  const date = requireString(row, 'date', `${variant} activity row`);
  if (parseDay(date) === undefined) throw new Error(`sandbox data: activity date must be YYYY-MM-DD, got ${JSON.stringify(date)}`);
  const field = activityKeyField(variant);
  const key = activityKey(variant, row, field);
  let day = data.activity.get(date);
  if (day === undefined) {
    day = new SortedMap();
    data.activity.set(date, day);
  }
  return day.set(JSON.stringify(key), Object.freeze({ key: Object.freeze(key), record: Object.freeze(row) }));
}
