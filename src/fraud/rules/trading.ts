/**
 * mirrored_pnl and copy_trading (docs/fraud.md): pairs of prop-trading accounts whose results on
 * the same instrument and day mirror or copy each other.
 */
import { Money, money } from '../../kernel/money.js';
import { chunked, type TradeRow } from '../facts.js';
import type { Finding } from '../flags.js';
import { append } from '../../kernel/collections.js';
import { finding, key, ratio, type Ctx } from './unit.js';

async function tradeRows(ctx: Ctx, customers: readonly string[]): Promise<TradeRow[]> {
  const rows = await chunked(ctx.db, customers, 300, (c) => ctx.db('trading_activity').where('partner_id', ctx.partner).whereIn('customer_id', c)
    .select('customer_id', 'date', 'instrument', 'currency', 'lots_traded', 'pnl') as Promise<Record<string, unknown>[]>);
  return rows.map(toTrade);
}

const toTrade = (r: Record<string, unknown>): TradeRow => ({
  customer_id: String(r.customer_id), date: String(r.date).slice(0, 10), instrument: String(r.instrument), currency: String(r.currency), lots: money(r.lots_traded), pnl: money(r.pnl),
});

/** Other accounts' rows on the same (instrument, date) as these rows. */
async function sameInstrumentDay(ctx: Ctx, mine: readonly TradeRow[]): Promise<TradeRow[]> {
  const cells = [...new Set(mine.map((r) => key(r.instrument, r.date)))];
  const rows = await chunked(ctx.db, cells, 200, (c) => ctx.db('trading_activity').where('partner_id', ctx.partner)
    .where(function () { for (const cell of c) { const [instrument, date] = JSON.parse(cell) as [string, string]; this.orWhere(function () { this.where('instrument', instrument).where('date', date); }); } })
    .select('customer_id', 'date', 'instrument', 'currency', 'lots_traded', 'pnl') as Promise<Record<string, unknown>[]>);
  return rows.map(toTrade);
}

const near = (a: Money, b: Money, tolerance: number): boolean => a.minus(b).abs().lessThanOrEqualTo(Money.max(a.abs(), b.abs()).times(tolerance));
const pair = (a: string, b: string): [string, string] => (a < b ? [a, b] : [b, a]);

/** mirrored_pnl and copy_trading for pairs of accounts that include one of these customers. */
export async function tradingPairs(ctx: Ctx, customers: readonly string[]): Promise<Finding[]> {
  const runMirror = ctx.settings.mirrored_pnl.enabled;
  const runCopy = ctx.settings.copy_trading.enabled;
  if (!runMirror && !runCopy) return [];
  const own = await tradeRows(ctx, customers);
  if (own.length === 0) return [];
  const others = await sameInstrumentDay(ctx, own);
  const mine = new Set(customers);
  const cell = (r: TradeRow) => `${r.customer_id}\u0000${r.date}\u0000${r.instrument}\u0000${r.currency}`;
  const all = new Map<string, TradeRow>();
  for (const r of [...own, ...others]) all.set(cell(r), r);
  const byCell = new Map<string, TradeRow[]>();
  for (const r of all.values()) {
    const k = `${r.date}\u0000${r.instrument}\u0000${r.currency}`;
    append(byCell, k, r);
  }
  const m = ctx.settings.mirrored_pnl;
  const c = ctx.settings.copy_trading;
  const mirrored = new Map<string, { date: string; instrument: string; currency: string; a: TradeRow; b: TradeRow }[]>();
  const copyCandidates = new Set<string>();
  const judgePair = (x: TradeRow, y: TradeRow, done: Set<string>) => {
    if (x.customer_id === y.customer_id) return;
    const [a, b] = x.customer_id < y.customer_id ? [x, y] : [y, x];
    const id = key(a.customer_id, b.customer_id);
    if (done.has(id)) return;
    done.add(id);
    if (runMirror && a.pnl.isPositive() !== b.pnl.isPositive() && !a.pnl.isZero() && !b.pnl.isZero()
      && a.pnl.abs().greaterThanOrEqualTo(m.min_abs_pnl) && b.pnl.abs().greaterThanOrEqualTo(m.min_abs_pnl)
      && a.pnl.plus(b.pnl).abs().lessThanOrEqualTo(Money.max(a.pnl.abs(), b.pnl.abs()).times(m.pnl_tolerance))
      && near(a.lots, b.lots, m.lots_tolerance)) {
      append(mirrored, id, { date: a.date, instrument: a.instrument, currency: a.currency, a, b });
    }
    if (runCopy && near(a.lots, b.lots, c.lots_tolerance) && near(a.pnl, b.pnl, c.pnl_tolerance) && (a.pnl.isZero() === b.pnl.isZero())) copyCandidates.add(id);
  };
  // Per cell, the rows sorted by P&L: a touched row is compared only with the rows whose P&L can
  // mirror or copy it (a band around −pnl and +pnl, widened a little; the exact test is judgePair),
  // so a busy instrument-day costs n log n, not n².
  const band = (v: number, t: number): [number, number] => {
    if (t >= 1) return v >= 0 ? [0, Infinity] : [-Infinity, 0];
    const lo = Math.abs(v) * (1 - t);
    const hi = Math.abs(v) / (1 - t);
    return v >= 0 ? [lo * (1 - 1e-9) - 1e-6, hi * (1 + 1e-9) + 1e-6] : [-hi * (1 + 1e-9) - 1e-6, -lo * (1 - 1e-9) + 1e-6];
  };
  for (const rows of byCell.values()) {
    const sorted = rows.map((r) => ({ r, v: r.pnl.toNumber() })).sort((p, q) => p.v - q.v);
    const done = new Set<string>();
    const from = (x: number): number => {
      let lo = 0;
      let hi = sorted.length;
      while (lo < hi) { const mid = (lo + hi) >> 1; if (sorted[mid]!.v < x) lo = mid + 1; else hi = mid; }
      return lo;
    };
    const visit = ([lo, hi]: [number, number], x: TradeRow) => {
      for (let k = from(lo); k < sorted.length && sorted[k]!.v <= hi; k++) judgePair(x, sorted[k]!.r, done);
    };
    for (const { r: x, v } of sorted) {
      if (!mine.has(x.customer_id)) continue;
      if (runMirror && v !== 0) visit(band(-v, m.pnl_tolerance), x);
      if (runCopy) visit(v === 0 ? [0, 0] : band(v, c.pnl_tolerance), x);
    }
  }
  const out: Finding[] = [];
  const involved = [...new Set([...mirrored.keys(), ...copyCandidates].flatMap((p) => JSON.parse(p) as string[]))];
  const affRows = await chunked(ctx.db, involved, 300, (x) => ctx.db('fraud_customers').where('partner_id', ctx.partner).whereIn('customer_id', x).select('customer_id', 'affiliate_id') as Promise<{ customer_id: string; affiliate_id: string }[]>);
  const affiliates = new Map(affRows.map((r) => [r.customer_id, r.affiliate_id]));
  const aff = (a: string, b: string): string | null => (affiliates.get(a) !== undefined && affiliates.get(a) === affiliates.get(b) ? affiliates.get(a)! : null);
  // A hedge is the pair's habit, not a coincidence: the mirrored days are at least min_share of the
  // days both accounts traded one same instrument (two busy traders of EURUSD meet by chance).
  const mirrorPairs = [...mirrored].filter(([, hits]) => new Set(hits.map((h) => h.date)).size >= m.min_days);
  const partners = [...new Set(mirrorPairs.flatMap(([id]) => JSON.parse(id) as string[]))].filter((x) => !mine.has(x));
  const cellsOf = new Map<string, Map<string, Set<string>>>();
  for (const r of [...own, ...(await tradeRows(ctx, partners))]) {
    const perDay = cellsOf.get(r.customer_id) ?? new Map<string, Set<string>>();
    perDay.set(r.date, (perDay.get(r.date) ?? new Set()).add(`${r.instrument}\u0000${r.currency}`));
    cellsOf.set(r.customer_id, perDay);
  }
  for (const [id, hits] of mirrorPairs) {
    const days = new Set(hits.map((h) => h.date));
    const [a, b] = JSON.parse(id) as [string, string];
    let common = 0;
    const db = cellsOf.get(b);
    for (const [d, cells] of cellsOf.get(a) ?? []) if ([...cells].some((c) => db?.get(d)?.has(c))) common += 1;
    if (money(days.size).lessThan(money(common).times(m.min_share))) continue;
    hits.sort((p, q) => (p.date < q.date ? -1 : p.date > q.date ? 1 : p.instrument < q.instrument ? -1 : 1));
    out.push(finding(ctx, 'mirrored_pnl', id, aff(a, b), 'high', [a, b], {
      accounts: [a, b], days: days.size, min_days: m.min_days, common_days: common, share: ratio(days.size, common), min_share: m.min_share,
      rows: hits.map((h) => ({ date: h.date, instrument: h.instrument, currency: h.currency, pnl: [h.a.pnl.toFixed(), h.b.pnl.toFixed()], lots: [h.a.lots.toFixed(), h.b.lots.toFixed()] })),
    }));
  }
  if (copyCandidates.size > 0) {
    const ids = [...new Set([...copyCandidates].flatMap((p) => JSON.parse(p) as string[]))];
    const rows = await tradeRows(ctx, ids.filter((x) => !mine.has(x)));
    const days = new Map<string, Map<string, TradeRow[]>>();
    for (const r of [...own, ...rows]) {
      const perDay = days.get(r.customer_id) ?? new Map<string, TradeRow[]>();
      append(perDay, r.date, r);
      days.set(r.customer_id, perDay);
    }
    for (const id of [...copyCandidates].sort()) {
      const [a, b] = JSON.parse(id) as [string, string];
      const da = days.get(a);
      const db = days.get(b);
      if (!da || !db) continue;
      const same: { date: string; instruments: string[] }[] = [];
      for (const [d, ra] of [...da].sort((p, q) => (p[0] < q[0] ? -1 : 1))) {
        const rb = db.get(d);
        if (!rb || rb.length !== ra.length) continue;
        const match = ra.every((x) => rb.some((y) => y.instrument === x.instrument && y.currency === x.currency && near(x.lots, y.lots, c.lots_tolerance) && near(x.pnl, y.pnl, c.pnl_tolerance) && x.pnl.isZero() === y.pnl.isZero()));
        if (match) same.push({ date: d, instruments: ra.map((x) => x.instrument).sort() });
      }
      if (same.length < c.min_days) continue;
      const [p, q] = pair(a, b);
      out.push(finding(ctx, 'copy_trading', key(p, q), aff(p, q), 'high', [p, q], { accounts: [p, q], identical_days: same.length, min_days: c.min_days, days: same }));
    }
  }
  return out;
}
