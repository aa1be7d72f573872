/**
 * The facts moved by difference: what a batch changed, summed per day cell, product cell and
 * month cell (new versions' contributions minus old versions'), then applied to the stored cells
 * in a few set-based statements. A cell that comes back to zero everywhere is deleted, as a
 * rebuild would not have it. Exact decimals throughout.
 */
import type { Knex } from 'knex';
import type { RateBook } from '../kernel/fx.js';
import { money, moneyOrNull, ZERO, type Money } from '../kernel/money.js';
import { dialectOf } from '../store/dialect/index.js';
import { COUNT_COLUMNS, MONEY_COLUMNS, REPORT_TX_TYPES, type CountColumn, type MoneyColumn } from './facts-columns.js';
import { activityGgr, pairKey, SUMMED_COLUMNS, toUsd, TYPE_COLUMN } from './facts-values.js';

export type Sign = 1 | -1;
type Column = CountColumn | MoneyColumn;

/** What of a transaction a cell sums. */
export interface TxValues {
  type: string;
  status: string;
  amount_currency: unknown;
  currency: string;
  amount_usd: unknown;
}

const REPORTED: ReadonlySet<string> = new Set(REPORT_TX_TYPES);
/** Whether a transaction counts in the facts at all. */
export const reported = (t: { type: string; status: string }): boolean => t.status === 'approved' && REPORTED.has(t.type);

interface ProductDelta {
  purchases: number;
  fees: Money;
  unconverted: number;
}

export class FactDeltas {
  /** day \0 affiliate \0 campaign → column → difference */
  readonly cells = new Map<string, Map<Column, Money>>();
  /** day \0 affiliate \0 campaign \0 challenge_type \0 account_size → difference */
  readonly products = new Map<string, ProductDelta>();
  /** month \0 affiliate \0 campaign → difference of the month's distinct depositors */
  readonly monthDepositors = new Map<string, number>();

  add(day: string, pair: string, column: Column, value: Money | number): void {
    const key = `${day}\u0000${pair}`;
    let cell = this.cells.get(key);
    if (!cell) this.cells.set(key, (cell = new Map()));
    cell.set(column, (cell.get(column) ?? ZERO).plus(value));
  }

  /** A transaction version's contribution (sign −1: taken out), at its customer's pair and product. */
  addTx(day: string, pair: string, product: string, t: TxValues, fx: RateBook, sign: Sign): void {
    if (!reported(t)) return;
    const usd = toUsd(fx, t.amount_currency, t.currency, t.amount_usd, day);
    if (usd === undefined) this.add(day, pair, 'unconverted_tx', sign);
    else this.add(day, pair, TYPE_COLUMN[t.type] as MoneyColumn, usd.times(sign));
    if (t.type === 'deposit') this.add(day, pair, 'deposit_count', sign);
    else if (t.type === 'challenge_fee') {
      this.add(day, pair, 'challenge_purchases', sign);
      const key = `${day}\u0000${pair}\u0000${product}`;
      let p = this.products.get(key);
      if (!p) this.products.set(key, (p = { purchases: 0, fees: ZERO, unconverted: 0 }));
      p.purchases += sign;
      if (usd === undefined) p.unconverted += sign;
      else p.fees = p.fees.plus(usd.times(sign));
    }
  }

  /** An activity row version's contribution at the rate of its day (undefined: unconverted). */
  addActivity(day: string, pair: string, row: { total_bets: unknown; wins: unknown; ggr: unknown; ngr: unknown }, rate: Money | undefined, sign: Sign): void {
    if (rate === undefined) {
      this.add(day, pair, 'unconverted_activity', sign);
      return;
    }
    const bets = moneyOrNull(row.total_bets);
    const ngr = moneyOrNull(row.ngr);
    this.add(day, pair, 'bets_usd', (bets ?? ZERO).times(rate).times(sign));
    this.add(day, pair, 'ggr_usd', activityGgr(row).times(rate).times(sign));
    this.add(day, pair, 'ngr_usd', (ngr ?? ZERO).times(rate).times(sign));
  }

  /** An FTD's contribution (amount null: unconverted). */
  addFtd(day: string, pair: string, amountUsd: unknown, sign: Sign): void {
    this.add(day, pair, 'ftd_count', sign);
    if (amountUsd === null || amountUsd === undefined) this.add(day, pair, 'unconverted_ftd', sign);
    else this.add(day, pair, 'ftd_usd', money(amountUsd).times(sign));
  }

  addMonthDepositor(month: string, pair: string, sign: Sign): void {
    const key = `${month}\u0000${pair}`;
    this.monthDepositors.set(key, (this.monthDepositors.get(key) ?? 0) + sign);
  }
}

type SqlType = 'text' | 'date' | 'bigint' | 'numeric';
interface Table {
  name: string;
  /** Key columns after partner_id. */
  key: readonly string[];
  keyTypes: readonly SqlType[];
  counts: readonly string[];
  sums: readonly string[];
}

const DAY_CELLS: Table = { name: 'report_cells', key: ['day', 'affiliate_id', 'campaign_id'], keyTypes: ['date', 'text', 'text'], counts: COUNT_COLUMNS, sums: MONEY_COLUMNS };
const MONTH_CELLS: Table = { name: 'report_month_cells', key: ['month', 'affiliate_id', 'campaign_id'], keyTypes: ['text', 'text', 'text'], counts: COUNT_COLUMNS, sums: MONEY_COLUMNS };
const PRODUCT_CELLS: Table = {
  name: 'report_purchase_cells', key: ['day', 'affiliate_id', 'campaign_id', 'challenge_type', 'account_size'], keyTypes: ['date', 'text', 'text', 'text', 'text'],
  counts: ['purchases', 'unconverted'], sums: ['fees_usd'],
};

const keyText = (table: Table, r: Record<string, unknown>): string => table.key.map((k) => (table.keyTypes[table.key.indexOf(k)] === 'date' ? String(r[k]).slice(0, 10) : String(r[k]))).join('\u0000');

/** SQLite: the stored rows of these keys (each key: the key columns' values in order). */
async function readRows(trx: Knex.Transaction, table: Table, partner: string, keys: readonly string[][]): Promise<Map<string, Record<string, unknown>>> {
  const out = new Map<string, Record<string, unknown>>();
  for (const part of dialectOf(trx).chunks(keys, 200)) {
    const rows: Record<string, unknown>[] = await trx(table.name).where('partner_id', partner).whereIn([...table.key], part);
    for (const r of rows) out.set(keyText(table, r), r);
  }
  return out;
}

/** Deletes these keys' rows, and writes these whole rows (SQLite: PostgreSQL adds in SQL, addInSql). */
async function writeRows(trx: Knex.Transaction, table: Table, partner: string, upserts: Record<string, unknown>[], deletes: string[][]): Promise<void> {
  const dialect = dialectOf(trx);
  await dialect.deleteKeys(trx, table.name, partner, Object.fromEntries(table.key.map((k, i) => [k, table.keyTypes[i] as string])), deletes, 200);
  for (const part of dialect.insertChunks(upserts)) await trx(table.name).insert(part).onConflict(['partner_id', ...table.key]).merge();
}

const movingOf = (changes: Map<string, Map<string, Money>>): [string, Map<string, Money>][] =>
  [...changes].filter(([, d]) => [...d.values()].some((v) => !v.isZero()));

/**
 * SQLite: each key's stored values plus its difference (exact decimal text, computed here); a row
 * whose values all come to zero (`empty`) is deleted, any other written.
 */
async function applyTo(trx: Knex.Transaction, table: Table, partner: string, changes: Map<string, Map<string, Money>>, empty: (row: Record<string, unknown>) => boolean): Promise<void> {
  const moving = movingOf(changes);
  if (moving.length === 0) return;
  const keys = moving.map(([k]) => k.split('\u0000'));
  const stored = await readRows(trx, table, partner, keys);
  const upserts: Record<string, unknown>[] = [];
  const deletes: string[][] = [];
  for (const [key, delta] of moving) {
    const before = stored.get(key);
    const values = key.split('\u0000');
    const row: Record<string, unknown> = { partner_id: partner, ...Object.fromEntries(table.key.map((k, i) => [k, values[i]])) };
    for (const c of table.counts) row[c] = money(before?.[c] ?? 0).plus(delta.get(c) ?? ZERO).toNumber();
    for (const c of table.sums) row[c] = money(before?.[c] ?? 0).plus(delta.get(c) ?? ZERO).toFixed();
    if (empty(row)) {
      if (before) deletes.push(values);
    } else upserts.push(row);
  }
  await writeRows(trx, table, partner, upserts, deletes);
}

/** One table's part of the PostgreSQL statement: the upsert as a CTE, and the keys that came to zero. */
function additions(table: Table, n: number, moving: [string, Map<string, Money>][], emptySql: string): { cte: string; empty: string; json: string } {
  const moved = [...table.counts, ...table.sums].filter((c) => moving.some(([, d]) => d.has(c) && !(d.get(c) as Money).isZero()));
  const isCount = new Set(table.counts);
  const rows = moving.map(([key, d]) => {
    const values = key.split('\u0000');
    const row: Record<string, unknown> = Object.fromEntries(table.key.map((k, i) => [k, values[i]]));
    for (const c of moved) {
      const v = d.get(c);
      if (v !== undefined && !v.isZero()) row[c] = v.toFixed(); // counts too: PostgreSQL reads a bigint from its JSON text
    }
    return row;
  });
  const shape = [...table.key.map((k, i) => `${k} ${table.keyTypes[i] as string}`), ...moved.map((c) => `${c} ${isCount.has(c) ? 'bigint' : 'numeric'}`)].join(', ');
  const values = [...table.counts, ...table.sums].map((c) => (moved.includes(c) ? `COALESCE(k.${c}, 0)` : '0'));
  const cte = `u${n} AS (INSERT INTO ${table.name} (partner_id, ${[...table.key, ...table.counts, ...table.sums].join(', ')})
      SELECT :partner, ${table.key.map((k) => `k.${k}`).join(', ')}, ${values.join(', ')} FROM json_to_recordset(?::json) AS k(${shape})
      ON CONFLICT (partner_id, ${table.key.join(', ')}) DO UPDATE SET ${moved.map((c) => `${c} = ${table.name}.${c} + excluded.${c}`).join(', ')}
      RETURNING *)`;
  const empty = `SELECT ${n} AS t, json_build_array(${table.key.map((k) => `u.${k}::text`).join(', ')}) AS k FROM u${n} u WHERE ${emptySql}`;
  return { cte, empty, json: JSON.stringify(rows) };
}

/**
 * PostgreSQL adds the differences in the statement that writes them (exact NUMERIC), all tables
 * in one statement: only the columns the batch moved are sent, a new key starts from zero, and
 * the keys whose row comes to zero everywhere come back to be deleted (rare: a cell whose last
 * record went).
 */
async function addInSql(trx: Knex.Transaction, partner: string, parts: { table: Table; changes: Map<string, Map<string, Money>>; emptySql: string }[]): Promise<void> {
  const used = parts.map((p) => ({ ...p, moving: movingOf(p.changes) })).filter((p) => p.moving.length > 0);
  if (used.length === 0) return;
  const built = used.map((p, n) => additions(p.table, n, p.moving, p.emptySql));
  // The partner is bound once per CTE, before its JSON rows.
  const sql = `WITH ${built.map((b) => b.cte.replace(':partner', '?')).join(', ')} ${built.map((b) => b.empty).join(' UNION ALL ')}`;
  const result = await trx.raw(sql, built.flatMap((b) => [partner, b.json]));
  const empty = (result as { rows: { t: number; k: string[] }[] }).rows;
  for (const [n, p] of used.entries()) {
    const keys = empty.filter((r) => Number(r.t) === n).map((r) => r.k.map(String));
    if (keys.length > 0) await writeRows(trx, p.table, partner, [], keys);
  }
}

const zeroSql = (columns: readonly string[]): string => columns.map((c) => `u.${c} = 0`).join(' AND ');

const allZero = (columns: readonly string[]) => (row: Record<string, unknown>): boolean => columns.every((c) => money(row[c] as string | number).isZero());

/** Writes a batch's differences to the day cells, their month cells and the product cells. */
export async function applyDeltas(trx: Knex.Transaction, partner: string, deltas: FactDeltas): Promise<void> {
  const months = new Map<string, Map<string, Money>>();
  const monthOf = (month: string, pair: string): Map<string, Money> => {
    const key = `${month}\u0000${pair}`;
    let m = months.get(key);
    if (!m) months.set(key, (m = new Map()));
    return m;
  };
  for (const [key, delta] of deltas.cells) {
    const [day, affiliate, campaign] = key.split('\u0000') as [string, string, string];
    const m = monthOf(day.slice(0, 7), pairKey(affiliate, campaign));
    for (const c of SUMMED_COLUMNS) {
      const v = delta.get(c as Column);
      if (v !== undefined) m.set(c, (m.get(c) ?? ZERO).plus(v));
    }
  }
  for (const [key, n] of deltas.monthDepositors) {
    const [month, affiliate, campaign] = key.split('\u0000') as [string, string, string];
    const m = monthOf(month, pairKey(affiliate, campaign));
    m.set('depositors', (m.get('depositors') ?? ZERO).plus(n));
  }
  const products = new Map([...deltas.products].map(([k, p]) => [k, new Map<string, Money>([['purchases', money(p.purchases)], ['unconverted', money(p.unconverted)], ['fees_usd', p.fees]])]));
  const cellColumns = [...COUNT_COLUMNS, ...MONEY_COLUMNS];
  const dayCells = deltas.cells as Map<string, Map<string, Money>>;
  // Exact sums in SQL (PostgreSQL's NUMERIC) add the differences where they are written; else here.
  if (dialectOf(trx).exactDecimals) {
    return addInSql(trx, partner, [
      { table: DAY_CELLS, changes: dayCells, emptySql: zeroSql(cellColumns) },
      { table: MONTH_CELLS, changes: months, emptySql: zeroSql(cellColumns) },
      { table: PRODUCT_CELLS, changes: products, emptySql: 'u.purchases = 0' },
    ]);
  }
  await applyTo(trx, DAY_CELLS, partner, dayCells, allZero(cellColumns));
  await applyTo(trx, MONTH_CELLS, partner, months, allZero(cellColumns));
  await applyTo(trx, PRODUCT_CELLS, partner, products, (row) => Number(row.purchases) === 0);
}

