/**
 * Agreement: after a seeded random sequence of loads, re-sends, reversals, re-attributions,
 * re-aggregated days, backfilled dates and late customers (through the real Loader and the real
 * after-load jobs), every cell of the affiliate report equals the same figure computed with plain
 * SQL from the raw tables and the ledger. PostgreSQL sums NUMERIC exactly and is compared exactly;
 * SQLite's SQL sums decimal text as floating point, so there the SQL figure is compared to 1e-6.
 */
import assert from 'node:assert/strict';
import type { Knex } from 'knex';
import { money as dec, type Money } from '../../src/kernel/money.js';
import { affiliateReport, type AffiliateRow, type Grain } from '../../src/reports/affiliates.js';
import { rebuildFacts } from '../../src/reports/facts.js';
import type { SpecRecord, Variant } from '../../src/types.js';
import { STORES } from '../support/stores.js';
import { factTables, reportWorld, type ReportWorld } from './support.js';
import { mulberry32 as prng } from '../../src/kernel/prng.js';


const DAYS = ['2026-10-30', '2026-10-31', '2026-11-01', '2026-11-02'];
const RATES = 'date,currency,rate\n2026-10-30,EUR,1.07\n2026-10-31,EUR,1.0834\n2026-11-02,EUR,1.1\n2026-11-01,GBP,1.25\n';

interface Expected {
  counts: Map<string, Record<string, number>>;
  sums: Map<string, Record<string, Money | null>>;
}

/** The report's figures from the raw tables and the ledger, with plain SQL. */
async function plainSql(knex: Knex, kind: 'sqlite' | 'postgres', partner: string, grain: Grain, month?: string): Promise<Expected> {
  const day = (col: string, date = false) => (kind === 'postgres' ? `to_char(${col}, 'YYYY-MM-DD')` : date ? col : `substr(${col}, 1, 10)`);
  const g = (dayExpr: string) => (grain === 'day' ? dayExpr : grain === 'month' ? `substr(${dayExpr}, 1, 7)` : "COALESCE(c.campaign_id, '')");
  const inMonth = (dayExpr: string) => (month ? ` AND substr(${dayExpr}, 1, 7) = '${month}'` : '');
  const rDay = kind === 'postgres' ? "to_char(r.date, 'YYYY-MM-DD')" : 'r.date';
  const tDay = day('t.transaction_date');
  const usd = "COALESCE(t.amount_usd, t.amount_currency * (CASE WHEN t.currency = 'USD' THEN 1 ELSE r.rate END))";
  const txFrom = `FROM transactions t JOIN customers c ON c.partner_id = t.partner_id AND c.customer_id = t.customer_id
    LEFT JOIN fx_rates r ON r.currency = t.currency AND ${rDay} = ${tDay}`;
  const typed = (type: string, what: string) => `SUM(CASE WHEN t.transaction_type = '${type}' THEN ${what} END)`;
  const rows = async (sql: string): Promise<Record<string, unknown>[]> => {
    const result = await knex.raw(sql, [partner]);
    return (kind === 'postgres' ? result.rows : result) as Record<string, unknown>[];
  };
  const out: Expected = { counts: new Map(), sums: new Map() };
  const add = (r: Record<string, unknown>, counts: string[], sums: string[]) => {
    const key = `${String(r.aff)}|${String(r.g)}`;
    const c = out.counts.get(key) ?? {};
    const s = out.sums.get(key) ?? {};
    for (const k of counts) c[k] = (c[k] ?? 0) + Number(r[k] ?? 0);
    for (const k of sums) s[k] = r[k] === null || r[k] === undefined ? (s[k] ?? null) : dec(String(r[k])).plus(s[k] ?? 0);
    out.counts.set(key, c);
    out.sums.set(key, s);
  };
  for (const r of await rows(`SELECT c.affiliate_id AS aff, ${g(day('c.signup_date'))} AS g, COUNT(*) AS registrations FROM customers c WHERE c.partner_id = ?${inMonth(day('c.signup_date'))} GROUP BY 1, 2`)) add(r, ['registrations'], []);
  for (const r of await rows(`SELECT c.affiliate_id AS aff, ${g(tDay)} AS g,
      ${typed('deposit', usd)} AS deposits_usd, ${typed('deposit', '1')} AS deposit_count, COUNT(DISTINCT CASE WHEN t.transaction_type = 'deposit' THEN t.customer_id END) AS depositors,
      ${typed('withdrawal', usd)} AS withdrawals_usd, ${typed('bonus', usd)} AS bonuses_usd, ${typed('challenge_fee', usd)} AS challenge_fees_usd, ${typed('challenge_fee', '1')} AS challenge_purchases,
      ${typed('reset_fee', usd)} AS reset_fees_usd, ${typed('refund', usd)} AS refunds_usd, ${typed('payout', usd)} AS payouts_usd,
      SUM(CASE WHEN ${usd} IS NULL THEN 1 ELSE 0 END) AS unconverted
    ${txFrom} WHERE t.partner_id = ? AND t.status = 'approved' AND t.transaction_type IN ('deposit', 'withdrawal', 'bonus', 'challenge_fee', 'reset_fee', 'refund', 'payout')${inMonth(tDay)} GROUP BY 1, 2`)) {
    add(r, ['deposit_count', 'depositors', 'challenge_purchases', 'unconverted'], ['deposits_usd', 'withdrawals_usd', 'bonuses_usd', 'challenge_fees_usd', 'reset_fees_usd', 'refunds_usd', 'payouts_usd']);
  }
  for (const r of await rows(`SELECT c.affiliate_id AS aff, ${g(tDay)} AS g, COUNT(*) AS ftd_count, SUM(${usd}) AS ftd_usd, SUM(CASE WHEN ${usd} IS NULL THEN 1 ELSE 0 END) AS unconverted
    ${txFrom} WHERE t.partner_id = ? AND t.transaction_type = 'deposit' AND t.status = 'approved' AND NOT EXISTS (
      SELECT 1 FROM transactions e WHERE e.partner_id = t.partner_id AND e.customer_id = t.customer_id AND e.transaction_type = 'deposit' AND e.status = 'approved'
      AND (e.transaction_date < t.transaction_date OR (e.transaction_date = t.transaction_date AND e.transaction_id < t.transaction_id)))${inMonth(tDay)} GROUP BY 1, 2`)) add(r, ['ftd_count', 'unconverted'], ['ftd_usd']);
  const aDay = day('a.date', true);
  const rate = "(CASE WHEN a.currency = 'USD' THEN 1 ELSE r.rate END)";
  for (const r of await rows(`SELECT c.affiliate_id AS aff, ${g(aDay)} AS g, SUM(COALESCE(a.total_bets, 0) * ${rate}) AS bets_usd,
      SUM(COALESCE(a.ggr, a.total_bets - a.wins, 0) * ${rate}) AS ggr_usd, SUM(COALESCE(a.ngr, 0) * ${rate}) AS ngr_usd, SUM(CASE WHEN ${rate} IS NULL THEN 1 ELSE 0 END) AS unconverted
    FROM gaming_activity a JOIN customers c ON c.partner_id = a.partner_id AND c.customer_id = a.customer_id
    LEFT JOIN fx_rates r ON r.currency = a.currency AND ${rDay} = ${aDay} WHERE a.partner_id = ?${inMonth(aDay)} GROUP BY 1, 2`)) add(r, ['unconverted'], ['bets_usd', 'ggr_usd', 'ngr_usd']);
  if (grain === 'month') {
    for (const r of await rows(`SELECT affiliate_id AS aff, period AS g, SUM(CASE WHEN amount_usd >= 0 THEN amount_usd ELSE 0 END) AS commissions_earned_usd,
        SUM(CASE WHEN amount_usd < 0 THEN amount_usd ELSE 0 END) AS commissions_clawed_back_usd, SUM(amount_usd) AS commissions_net_usd
      FROM commission_ledger WHERE partner_id = ? GROUP BY 1, 2`)) add(r, [], ['commissions_earned_usd', 'commissions_clawed_back_usd', 'commissions_net_usd']);
    for (const r of await rows('SELECT affiliate_id AS aff, period AS g, COUNT(*) AS commissions_held FROM commission_holds WHERE partner_id = ? GROUP BY 1, 2')) add(r, ['commissions_held'], []);
  }
  return out;
}

const COUNTS = ['registrations', 'ftd_count', 'depositors', 'deposit_count', 'challenge_purchases', 'unconverted'] as const;
const SUMS = ['ftd_usd', 'deposits_usd', 'withdrawals_usd', 'bonuses_usd', 'bets_usd', 'ggr_usd', 'ngr_usd', 'challenge_fees_usd', 'reset_fees_usd', 'refunds_usd', 'payouts_usd'] as const;

async function assertAgreement(w: ReportWorld, kind: 'sqlite' | 'postgres', partner: string, step: string): Promise<number> {
  let compared = 0;
  // Each grain over everything, and campaign rows of one month (read from month cells).
  for (const [grain, month] of [['day'], ['month'], ['campaign'], ['campaign', '2026-10']] as [Grain, string?][]) {
    const expected = await plainSql(w.t.store.knex, kind, partner, grain, month);
    const report = await affiliateReport(w.t.store, month ? { partner, from: `${month}-01`, to: `${month}-31` } : { partner }, grain);
    const actual = new Map<string, AffiliateRow>(report.rows.map((r) => [`${r.affiliate}|${grain === 'day' ? r.day : grain === 'month' ? r.month : r.campaign ?? ''}`, r]));
    const keys = new Set([...expected.counts.keys(), ...actual.keys()]);
    for (const key of keys) {
      const row = actual.get(key);
      const counts = expected.counts.get(key) ?? {};
      const sums = expected.sums.get(key) ?? {};
      const where = `${step}, ${partner} by ${grain}${month ? ` of ${month}` : ''} ${key}`;
      for (const c of COUNTS) assert.equal(row?.[c] ?? 0, counts[c] ?? 0, `${where}: ${c}`);
      const moneyCols: readonly string[] = grain === 'month' ? [...SUMS, 'commissions_earned_usd', 'commissions_clawed_back_usd', 'commissions_net_usd'] : SUMS;
      for (const c of moneyCols) {
        const want = sums[c] ?? dec(0);
        const got = dec((row as unknown as Record<string, string | null> | undefined)?.[c] ?? '0');
        if (kind === 'postgres') assert.ok(got.equals(want), `${where}: ${c} report ${got.toFixed()} ≠ SQL ${want.toFixed()}`);
        else assert.ok(got.minus(want).abs().lessThan(1e-6), `${where}: ${c} report ${got.toFixed()} ≠ SQL ${want.toFixed()}`);
        compared += 1;
      }
      if (grain === 'month') assert.equal(row?.commissions_held ?? 0, counts.commissions_held ?? 0, `${where}: commissions_held`);
      compared += COUNTS.length;
    }
  }
  return compared;
}

/** One random scenario over two partners (iGaming and prop trading). */
async function scenario(w: ReportWorld, seed: number, steps: number, check: (step: string) => Promise<void>): Promise<void> {
  const rnd = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rnd() * items.length)] as T;
  const amount = () => Math.round(rnd() * 50000) / 100;
  const partners: { partner: string; variant: Variant; types: string[] }[] = [
    { partner: 'casino', variant: 'igaming', types: ['deposit', 'deposit', 'withdrawal', 'bonus', 'adjustment'] },
    { partner: 'firm', variant: 'prop-trading', types: ['challenge_fee', 'challenge_fee', 'reset_fee', 'refund', 'payout'] },
  ];
  const customers = new Map<string, SpecRecord>();
  const txs = new Map<string, SpecRecord>();
  let version = 0;
  let run = 0;
  const at = (day: string) => `${day}T${String(Math.floor(rnd() * 24)).padStart(2, '0')}:${String(Math.floor(rnd() * 60)).padStart(2, '0')}:00Z`;
  const load = async (p: (typeof partners)[number], entity: 'customers' | 'transactions' | 'activity', records: SpecRecord[]) => {
    const result = await w.loader.load({ partner: p.partner, variant: p.variant, entity, runId: `r${++run}`, records: records.map((value, i) => ({ position: i + 1, value })) });
    assert.equal(result.rejected, 0, JSON.stringify(result.rejects));
  };
  for (let step = 0; step < steps; step++) {
    const p = pick(partners);
    const op = pick(['customers', 'transactions', 'transactions', 'resend', 'activity', 'replace'] as const);
    const ids = Array.from({ length: 8 }, (_, i) => `${p.partner}-c${i + 1}`);
    if (op === 'customers') {
      const batch: SpecRecord[] = [];
      for (let i = 0; i < 1 + Math.floor(rnd() * 3); i++) {
        const id = pick(ids);
        const record: SpecRecord = {
          customer_id: id, signup_date: at(pick(DAYS)), affiliate_id: pick(['aff-1', 'aff-2', 'aff-3']), last_modified_date: `2026-11-10T00:00:${String(++version % 60).padStart(2, '0')}.${String(version).padStart(6, '0')}Z`,
          ...(rnd() < 0.6 ? { campaign_id: pick(['spring', 'autumn']) } : {}),
          ...(p.variant === 'prop-trading' ? { challenge_type: pick(['standard', 'rapid']), account_size: pick([10000, 25000, 100000]) } : {}),
        };
        customers.set(`${p.partner}/${id}`, record);
        batch.push(record);
      }
      await load(p, 'customers', batch);
    } else if (op === 'transactions') {
      // New transactions, some for customers not loaded yet (they wait, and count once their customer arrives).
      const batch: SpecRecord[] = [];
      for (let i = 0; i < 1 + Math.floor(rnd() * 4); i++) {
        const id = `${p.partner}-t${txs.size + 1}`;
        const currency = pick(['USD', 'USD', 'EUR', 'GBP']);
        const record: SpecRecord = {
          transaction_id: id, customer_id: pick(ids), transaction_type: pick(p.types), amount_currency: amount(), currency, transaction_date: at(pick(DAYS)),
          status: pick(['approved', 'approved', 'approved', 'declined', 'pending']), ...(currency !== 'USD' && rnd() < 0.3 ? { amount_usd: amount() } : {}),
        };
        txs.set(id, { ...record, partner: p.partner });
        batch.push(record);
      }
      await load(p, 'transactions', batch);
    } else if (op === 'resend') {
      // A known transaction again: unchanged, reversed or approved, or backfilled to another day.
      const mine = [...txs.values()].filter((t) => t.partner === p.partner);
      if (mine.length === 0) continue;
      const batch: SpecRecord[] = [];
      for (let i = 0; i < 1 + Math.floor(rnd() * 3); i++) {
        const old = { ...pick(mine) };
        delete old.partner;
        const change = pick(['same', 'status', 'status', 'date', 'customer'] as const);
        const next = { ...old };
        if (change === 'status') next.status = pick(['approved', 'reversed', 'declined']);
        if (change === 'date') next.transaction_date = at(pick(DAYS));
        if (change === 'customer') next.customer_id = pick(ids);
        txs.set(String(next.transaction_id), { ...next, partner: p.partner });
        batch.push(next);
      }
      await load(p, 'transactions', batch);
    } else if (op === 'activity' && p.variant === 'igaming') {
      const batch = new Map<string, SpecRecord>();
      for (let i = 0; i < 1 + Math.floor(rnd() * 5); i++) {
        const record: SpecRecord = { date: pick(DAYS), customer_id: pick(ids), game_type: pick(['slots', 'poker']), currency: pick(['USD', 'EUR', 'GBP']), total_bets: amount() };
        if (rnd() < 0.7) record.ggr = Math.round((rnd() - 0.4) * 10000) / 100;
        else record.wins = amount();
        if (rnd() < 0.7) record.ngr = Math.round((rnd() - 0.5) * 10000) / 100;
        batch.set(`${String(record.date)}${String(record.customer_id)}${String(record.game_type)}${String(record.currency)}`, record);
      }
      await load(p, 'activity', [...batch.values()]);
    } else if (op === 'replace' && p.variant === 'igaming') {
      const day = pick(DAYS);
      const rows = new Map<string, SpecRecord>();
      for (let i = 0; i < Math.floor(rnd() * 3); i++) {
        const record: SpecRecord = { date: day, customer_id: pick(ids), game_type: pick(['slots', 'live_casino']), currency: 'USD', total_bets: amount(), ggr: amount(), ngr: amount() };
        rows.set(`${String(record.customer_id)}${String(record.game_type)}`, record);
      }
      await w.loader.transaction(async (tx) => {
        await tx.replaceDays(p.partner, p.variant, [day]);
        await tx.load({ partner: p.partner, variant: p.variant, entity: 'activity', runId: `day-${++run}`, records: [...rows.values()].map((value, i) => ({ position: i + 1, value })) });
      });
    }
    if ((step + 1) % 20 === 0) await check(`after step ${step + 1}`);
  }
  // Every customer arrives in the end: what waited for them loads and counts.
  for (const p of partners) {
    const ids = Array.from({ length: 8 }, (_, i) => `${p.partner}-c${i + 1}`).filter((id) => !customers.has(`${p.partner}/${id}`));
    if (ids.length > 0) await load(p, 'customers', ids.map((id) => ({ customer_id: id, signup_date: at(pick(DAYS)), affiliate_id: 'aff-late' })));
  }
  await check('at the end');
}

for (const backend of STORES) {
  describe(`report agreement with plain SQL on ${backend.name}`, () => {
    let w: ReportWorld;
    beforeEach(async () => { w = await reportWorld(backend); });
    afterEach(async () => w.drop());

    it('every cell equals plain SQL over the raw tables and the ledger, after random loads, re-sends, reversals and replaced days; a rebuild gives the same report', async () => {
      await w.rates(RATES);
      let compared = 0;
      const seed = Number(process.env.REPORT_SEED ?? 20261123);
      await scenario(w, seed, backend.name === 'postgres' ? 80 : 120, async (step) => {
        for (const partner of ['casino', 'firm']) compared += await assertAgreement(w, backend.name, partner, `seed ${seed} ${step}`);
      });
      assert.ok(compared > 500, `compared ${compared} figures`);
      const before = await Promise.all((['day', 'month', 'campaign'] as const).map((g) => affiliateReport(w.t.store, {}, g)));
      const factsBefore = await factTables(w.t.store.knex);
      await rebuildFacts(w.t.store, 'casino', 'igaming');
      await rebuildFacts(w.t.store, 'firm', 'prop-trading');
      const after = await Promise.all((['day', 'month', 'campaign'] as const).map((g) => affiliateReport(w.t.store, {}, g)));
      assert.deepEqual(after, before);
      // The facts kept by difference are, row for row, what a full rebuild from the raw tables writes (no cell left at zero).
      const factsAfter = await factTables(w.t.store.knex);
      for (const table of Object.keys(factsAfter)) assert.deepEqual(factsBefore[table], factsAfter[table], `${table}: incremental ≠ rebuild`);
    });
  });
}
