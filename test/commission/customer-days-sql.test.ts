/**
 * The set-based customer-days of a bulk take (PostgreSQL, src/commission/customer-days-sql.ts)
 * against the process's deriveDay (refreshDays): the same stored days, the same month deltas, the
 * same counts, over the cases deriveDay knows: rows in USD and in a currency with and without a
 * rate, rows with and without `ngr` (then GGR minus the day's approved bonuses, by absolute value,
 * in USD or at the bonus's rate), `ggr` absent (total_bets − wins, or 0), a cached day that is
 * unchanged, one that changes, one whose rows are gone, one of a customer not in the store, and a
 * customer whose days move to another affiliate. Amounts are worked out by hand for a few days.
 */
import assert from 'node:assert/strict';
import type { Knex } from 'knex';
import { refreshDaysSql } from '../../src/commission/customer-days-sql.js';
import { refreshDays } from '../../src/commission/customer-days.js';
import { MonthDeltas } from '../../src/commission/month-deltas.js';
import { readBonusTransactions, readCustomers } from '../../src/commission/facts.js';
import { money } from '../../src/kernel/money.js';
import { parseRatesCsv, saveRates } from '../../src/store/fx-rates.js';
import type { Entity, SpecRecord } from '../../src/types.js';
import { loaderWith } from '../support/loader.js';
import { customer, deposit, gaming, raw } from '../support/records.js';
import { STORES, type TestStore } from '../support/stores.js';

const P = 'casino';
const NOW = '2026-11-22T10:00:00.000Z';

const bonus = (id: string, c: string, day: string, extra: SpecRecord = {}): SpecRecord =>
  deposit(id, c, { transaction_type: 'bonus', transaction_date: `${day}T13:00:00Z`, ...extra });

const CUSTOMERS = [customer('c1'), customer('c2'), customer('c3'), customer('c4'), customer('c5', { affiliate_id: 'aff-2' }), customer('c6')];
const ACTIVITY = [
  // c1 11-02: EUR at 1.1 with ngr, USD with ngr: GGR (100 - 60) x 1.1 + 10 = 54, NGR 30 x 1.1 + 5 = 38, bets 110 + 20 = 130.
  gaming('2026-11-02', 'c1', { total_bets: 100, wins: 60, ngr: 30 }),
  gaming('2026-11-02', 'c1', { currency: 'USD', game_type: 'live', ggr: 10, total_bets: 20, ngr: 5 }),
  // c1 11-03: no ngr; ggr sent 50 (USD), bonuses 11-03: -8 USD, 10 EUR at 1.2, a pending one and one of 11-04: NGR 50 - 8 - 12 = 30.
  gaming('2026-11-03', 'c1', { currency: 'USD', ggr: 50 }),
  // c2 11-02: GBP without a rate: missing, the amounts null.
  gaming('2026-11-02', 'c2', { currency: 'GBP', total_bets: 10, wins: 1 }),
  // c2 11-03: neither ggr nor total_bets: GGR 0; no ngr, a bonus in GBP without rate on 11-03: missing GBP 2026-11-03.
  gaming('2026-11-03', 'c2', { currency: 'USD', wins: 4 }),
  // c3 11-02: unchanged from the cached day written below.
  gaming('2026-11-02', 'c3', { currency: 'USD', ggr: 7, ngr: 7, total_bets: 9 }),
  // c4 11-02: changed from its cached day.
  gaming('2026-11-02', 'c4', { currency: 'USD', ggr: 12, ngr: 11, total_bets: 40 }),
  // c5 (aff-2) 11-02, cached under aff-1: moves.
  gaming('2026-11-02', 'c5', { currency: 'USD', ggr: 3, ngr: 3 }),
  // c6 11-02: amount_usd of the bonus wins over its currency.
  gaming('2026-11-02', 'c6', { currency: 'EUR', total_bets: 10, wins: 0 }),
];
const TRANSACTIONS = [
  bonus('b1', 'c1', '2026-11-03', { currency: 'USD', amount_currency: -8 }),
  bonus('b2', 'c1', '2026-11-03', { currency: 'EUR', amount_currency: 10 }),
  bonus('b3', 'c1', '2026-11-03', { currency: 'USD', amount_currency: 100, status: 'pending' }),
  bonus('b4', 'c1', '2026-11-04', { currency: 'USD', amount_currency: 100 }),
  bonus('b5', 'c2', '2026-11-03', { currency: 'GBP', amount_currency: 5 }),
  bonus('b6', 'c6', '2026-11-02', { currency: 'EUR', amount_currency: 4, amount_usd: 4.5 }),
  deposit('d1', 'c6', { currency: 'USD', transaction_date: '2026-11-02T08:00:00Z' }),
];
const RATES = 'date,currency,rate\n2026-11-02,EUR,1.1\n2026-11-03,EUR,1.2\n';
/** Every pair: the active ones, c1's 11-05 (no rows, cached: removed), and ghost's (not in the store, cached: removed). */
const PAIRS: [string, string[]][] = [
  ['c1', ['2026-11-02', '2026-11-03', '2026-11-05']], ['c2', ['2026-11-02', '2026-11-03']], ['c3', ['2026-11-02']],
  ['c4', ['2026-11-02']], ['c5', ['2026-11-02']], ['c6', ['2026-11-02', '2026-11-06']], ['ghost', ['2026-11-02']],
];
const CACHED = [
  ['c1', '2026-11-05', 'aff-1', '5', '5', '5', null],
  ['c3', '2026-11-02', 'aff-1', '7', '7', '9', null],
  ['c4', '2026-11-02', 'aff-1', '10', '10', '40', null],
  ['c5', '2026-11-02', 'aff-1', '3', '3', '0', null],
  ['ghost', '2026-11-02', 'aff-9', null, null, null, 'EUR 2026-11-02'],
] as const;

const postgres = STORES.filter((b) => b.name === 'postgres');

for (const backend of postgres) {
  describe(`customer-days derived set-based agree with deriveDay (${backend.name})`, function () {
    this.timeout(60_000);
    let t: TestStore;
    before(async () => {
      t = await backend.create();
      const loader = loaderWith(t.store, []);
      const load = async (entity: Entity, records: SpecRecord[]) => {
        const r = await loader.load({ partner: P, variant: 'igaming', entity, runId: `run-${entity}`, records: raw(records) });
        assert.equal(r.rejected, 0, JSON.stringify(r.rejects));
      };
      await load('customers', CUSTOMERS);
      await load('activity', ACTIVITY);
      await load('transactions', TRANSACTIONS);
      await t.store.transaction((trx) => saveRates(trx, parseRatesCsv(RATES).rates, 'test.csv', NOW));
      await t.store.knex('commission_customer_days').insert(CACHED.map(([c, date, aff, ggr, ngr, bets, missing]) => ({
        partner_id: P, customer_id: c, date, affiliate_id: aff, ggr_usd: ggr, ngr_usd: ngr, bets_usd: bets, missing, updated_at: NOW,
      })));
    });
    after(async () => t?.drop());

    /** Runs one way in a transaction that is rolled back: the days it left, its deltas and counts. */
    async function outcome(way: 'process' | 'set-based'): Promise<{ days: string[]; deltas: string[]; written: number; removed: number; customers: string[] }> {
      const rollback = new Error('rollback');
      let out: Awaited<ReturnType<typeof outcome>> | undefined;
      await t.store.transaction(async (trx: Knex.Transaction) => {
        const pairs = new Map(PAIRS.map(([c, days]) => [c, new Set(days)]));
        const customers = await readCustomers(trx, P, pairs.keys());
        const deltas = new MonthDeltas();
        const r = way === 'process'
          ? await refreshDays(trx, P, pairs, customers, (list, from, to) => readBonusTransactions(trx, P, list, from, to), deltas, NOW)
          : await refreshDaysSql(trx, P, pairs, customers, deltas, NOW);
        const rows = (await trx('commission_customer_days').where('partner_id', P).orderBy(['customer_id', 'date'])) as Record<string, unknown>[];
        const num = (v: unknown) => (v === null ? 'null' : money(String(v)).toFixed());
        out = {
          days: rows.map((d) => [d.customer_id, String(d.date instanceof Date ? d.date.toISOString() : d.date).slice(0, 10), d.affiliate_id, num(d.ggr_usd), num(d.ngr_usd), num(d.bets_usd), d.missing].join(' ')),
          deltas: [...deltas.map].map(([k, d]) => [k.replace('\u0000', ' '), d.ggr.toFixed(), d.ngr.toFixed(), d.days, d.missingDays, [...d.sources].sort().join(','), d.unlisted].join(' ')).sort(),
          written: r.written, removed: r.removed, customers: [...r.customers].sort(),
        };
        throw rollback;
      }).catch((e: unknown) => { if (e !== rollback) throw e; });
      return out as NonNullable<typeof out>;
    }

    it('writes the same days and the same month deltas as deriveDay, with the amounts worked out by hand', async () => {
      const process = await outcome('process');
      const set = await outcome('set-based');
      assert.deepEqual(set, process);
      // By hand (see the records above).
      assert.ok(set.days.includes('c1 2026-11-02 aff-1 54 38 130 '), set.days.join('\n'));
      assert.ok(set.days.includes('c1 2026-11-03 aff-1 50 30 0 '), set.days.join('\n'));
      assert.ok(set.days.includes('c2 2026-11-02 aff-1 null null null GBP 2026-11-02'));
      assert.ok(set.days.includes('c2 2026-11-03 aff-1 null null null GBP 2026-11-03'));
      assert.ok(set.days.includes('c6 2026-11-02 aff-1 11 6.5 11 '));
      assert.ok(set.days.includes('c5 2026-11-02 aff-2 3 3 0 '));
      assert.ok(!set.days.some((d) => d.startsWith('ghost') || d.startsWith('c1 2026-11-05')));
      // c3 is unchanged: not written. Written: c1 x2, c2 x2, c4, c5, c6; removed: c1 11-05 and ghost's.
      assert.deepEqual([set.written, set.removed], [7, 2]);
      assert.deepEqual(set.customers, ['c1', 'c2', 'c4', 'c5', 'c6']);
      // aff-1 2026-11: + (54 + 50 + 12 + 11) - (5 + 10 + 3) = 109 GGR; days +6 (c1 x2, c2 x2, c4, c6) -3 (c1 11-05, c4, c5) = ... as deriveDay counts them.
      assert.ok(set.deltas.some((d) => d.startsWith('aff-1 2026-11 109 ')), set.deltas.join('\n'));
      assert.ok(set.deltas.some((d) => d.startsWith('aff-2 2026-11 3 3 1 0 activity:c5@2026-11-02 0')), set.deltas.join('\n'));
    });
  });
}
