/**
 * A labelled population for measuring the fraud rules (bench/fraud-quality.bench.ts): clean
 * customers in the shapes real platforms show, including the behaviours that look like fraud and
 * are not, and every rule's pattern planted at several sizes, the smallest being the one an
 * affiliate manager would still want to see. Kept apart from the rules and their thresholds
 * (config/fraud.yaml): these shapes say what is fraud and what is not; the rules are tuned
 * against them, never the other way round.
 *
 * Money follows the player's balance, as on a real platform: what is bet is lost or won (a payout
 * ratio around 0.95 per session, with the spread of slots), a withdrawal takes out at most what
 * the balance holds, and a welcome bonus (100% of the first deposit, up to 100 USD) must be
 * wagered 35 times before it can leave; a withdrawal before that forfeits it. Amounts are in the
 * player's currency (EUR, GBP, SEK, BRL, JPY, ...), `amount_usd` sent for 9 of 10 transactions,
 * activity only in the currency: the rules judge non-USD players only with the FX rates loaded
 * (fxRates below).
 *
 * Clean iGaming shapes (`clean` names each customer's):
 * - never_deposited: signed up, no deposit.
 * - casual: 1-5 deposits of 10-200 USD, a turnover of 0.6-15 times each deposit over 1-4 days,
 *   withdrawals of what the balance holds; 4 of 10 take the welcome bonus.
 * - changed_mind: a casual who once deposited, bet 5-60% of it and took the rest out within a day.
 * - quick_withdrawer: 1 or 2 round trips, each deposit bet 15-100% and the balance withdrawn the
 *   same or the next day.
 * - whale: 4-10 deposits of 1,000-20,000 USD, a turnover of 3-20 times, large withdrawals.
 * - big_winner: a session paying 8-40 times its bets, the winnings withdrawn within two days; half
 *   of them had taken the bonus (forfeited by the withdrawal, or wagered through).
 * - bonus_hunter: takes the bonus, wagers it 35-45 times within 2-4 days, withdraws the balance.
 * - small_affiliate: casual players of affiliates with 1-6 customers (few FTDs).
 * - family: 2-4 customers of one affiliate with one surname and country, different first names
 *   and e-mails, signed up within two days.
 * - tracker_click: 8-40 customers of one affiliate with one click id, a tracker's unfilled macro
 *   (`{clickid}`, `null`, ...).
 * About 1% of depositors charge their first deposit back, 0.5% of later deposits are reversed
 * (card schemes' monitoring starts near 1%).
 * Clean prop traders: the sandbox's generator (src/sandbox/generate-prop-trading.ts).
 *
 * Planted (`planted`, customers `fp-…`, affiliates `aff-fp-…` for the per-affiliate rules), per
 * size smallest / medium / large:
 * - duplicate_identity: 2 / 3 / 5 accounts (3 for a name) sharing a Gmail address with dots and a
 *   +tag, a click id, or a rare name signed up hours apart; in turn.
 * - cpa_farming: an affiliate-month of 10 FTDs with 5 at 20-25 USD barely played / 12 with 9 /
 *   30 with 27.
 * - bonus_bust_out: deposit 20, bonus 20, 10 bet, 40 withdrawn the next day / 100 EUR, 100 EUR,
 *   60 EUR bet, 180 EUR withdrawn (no amount_usd) / 500, 500, 200, 950.
 * - deposit_cycling: 500 in and 490 out the same day, 600 in and 590 out two days later, 10
 *   wagered in all / 3 trips of 200 in, 190 out, 20 bet / 6 trips of 1,000 GBP in, 980 out, 50 bet.
 * - chargeback_rate: an affiliate with 10 FTDs in a month, 6 reversed or charged back / 25 with
 *   7 / 60 with 20.
 * - ftd_spike: an affiliate with an FTD every second day, then 15 / 20 / 40 on one day.
 * - mirrored_pnl: a hedged pair on 3 / 5 / 10 days (P&L +x and −0.96x, lots within 2%).
 * - copy_trading: a pair with identical trades on 3 / 5 / 8 days.
 * - fast_funding: funded 6.5 / 3 / 1 days after signup, sharing an e-mail with 1 / 1 / 3 accounts.
 * - refund_after_fee: an affiliate-month with 4 of 12 / 6 of 10 / 10 of 10 fees refunded.
 */
import type { SpecRecord, Variant } from '../types.js';
import { AFFILIATES, USD_RATE, customerProfile, pickCountry, round2, roundAmount, type GeneratedCustomer, type GenerationContext } from './generate-common.js';
import { generatePropTradingCustomer } from './generate-prop-trading.js';
import { formatDay, formatMicros, MICROS_PER_DAY } from './instant.js';
import { createRandom, deriveSeed, type Random } from './prng.js';

export type Size = 'smallest' | 'medium' | 'large';
export const SIZES: readonly Size[] = ['smallest', 'medium', 'large'];

export type CleanShape = 'never_deposited' | 'casual' | 'changed_mind' | 'quick_withdrawer' | 'whale' | 'big_winner' | 'bonus_hunter' | 'small_affiliate' | 'family' | 'tracker_click' | 'trader';

/** One planted instance: a flag of `rule` must cover every one of `customers`. */
export interface PlantedShape {
  variant: Variant;
  rule: string;
  size: Size;
  instance: string;
  customers: string[];
}

export interface ShapedPopulation {
  variant: Variant;
  generated: GeneratedCustomer[];
  planted: PlantedShape[];
  /** Every clean customer and its shape. */
  clean: Map<string, CleanShape>;
}

export const PLANTED_RULES = {
  igaming: ['duplicate_identity', 'cpa_farming', 'bonus_bust_out', 'deposit_cycling', 'chargeback_rate', 'ftd_spike'],
  'prop-trading': ['mirrored_pnl', 'copy_trading', 'fast_funding', 'refund_after_fee'],
} as const satisfies Record<Variant, readonly string[]>;

const HOUR = 3_600_000_000;

/** The USD rate of a currency on a day: the sandbox's rate with a small daily drift (±0.5%). */
export function rateOn(currency: string, day: number): number {
  const base = USD_RATE[currency] ?? 1;
  if (currency === 'USD') return 1;
  return base * (1 + 0.005 * Math.sin(day + currency.charCodeAt(0)));
}

/** The FX rates of every currency the generators use, for every day of the range and the 40 before it (what `fx import` would load). */
export function fxRates(ctx: GenerationContext): { date: string; currency: string; rate: string }[] {
  const out: { date: string; currency: string; rate: string }[] = [];
  for (const currency of Object.keys(USD_RATE).filter((c) => c !== 'USD').sort()) {
    for (let d = ctx.fromDay - 40; d <= ctx.toDay; d++) out.push({ date: formatDay(d), currency, rate: rateOn(currency, d).toPrecision(8) });
  }
  return out;
}

/** One person's records, amounts given in USD and written in the person's currency. */
class Person {
  readonly c: GeneratedCustomer;
  private readonly days = new Map<string, SpecRecord>();
  constructor(readonly b: Builder, id: string, readonly signup: number, readonly currency: string, fields: SpecRecord, readonly sendUsd = true) {
    const at = formatMicros(signup, 'ms');
    this.c = { customer: { customer_id: id, signup_date: at, last_modified_date: at, kyc_status_id: 'approved', ...fields }, transactions: [], activity: [] };
    b.generated.set(id, this.c);
  }

  get id(): string { return this.c.customer.customer_id as string; }

  /** A transaction of `usd` (its value in USD) at `at` (micros); dropped when after the range. */
  tx(type: string, usd: number, at: number, extra: SpecRecord = {}): SpecRecord | undefined {
    if (at >= this.b.ctx.endMicros) return undefined;
    const day = Math.floor(at / MICROS_PER_DAY);
    const amount = roundAmount(usd / rateOn(this.currency, day), this.currency);
    const date = formatMicros(at, 'ms');
    const tx: SpecRecord = { transaction_id: `${this.id}-t${this.c.transactions.length + 1}`, customer_id: this.id, transaction_type: type, amount_currency: amount, currency: this.currency, transaction_date: date, status: 'approved', updated_at: date, ...extra };
    if (this.currency === 'USD' || (this.sendUsd && this.b.rng.chance(0.9))) tx.amount_usd = round2(usd);
    this.c.transactions.push(tx);
    return tx;
  }

  /** A day's play: bets and wins in USD, written in the currency; one row per day (merged). */
  play(day: number, betsUsd: number, winsUsd: number): void {
    if (day > this.b.ctx.toDay || betsUsd <= 0) return;
    const rate = rateOn(this.currency, day);
    const key = formatDay(day);
    const row = this.days.get(key) ?? { date: key, customer_id: this.id, game_type: 'slots', currency: this.currency, bets_count: 0, total_bets: 0, wins: 0, ggr: 0 };
    row.bets_count = Number(row.bets_count) + Math.max(1, Math.round(betsUsd));
    row.total_bets = roundAmount(Number(row.total_bets) + betsUsd / rate, this.currency);
    row.wins = roundAmount(Number(row.wins) + winsUsd / rate, this.currency);
    row.ggr = roundAmount(Number(row.total_bets) - Number(row.wins), this.currency);
    if (!this.days.has(key)) { this.days.set(key, row); this.c.activity.push(row); }
  }

  trade(day: number, instrument: string, lots: number, pnl: number): void {
    this.c.activity.push({ date: formatDay(day), customer_id: this.id, instrument, lots_traded: round2(lots), pnl: round2(pnl), currency: 'USD', drawdown: 1, max_drawdown: 2 });
  }
}

class Builder {
  readonly generated = new Map<string, GeneratedCustomer>();
  constructor(readonly ctx: GenerationContext, readonly rng: Random) {}
  /** Micros of `hour` o'clock on `day`, with random minutes. */
  at(day: number, hour: number): number {
    return day * MICROS_PER_DAY + Math.floor(hour * HOUR) + this.rng.int(0, 3_599) * 1_000_000;
  }
}

/** How a simulated player deposits and plays (USD). */
interface Habit {
  deposits: number;
  size: () => number;
  /** Turnover per deposit, as a multiple of it. */
  turnover: () => number;
  sessions: () => number;
  bonus: boolean;
  /** Chance of taking the withdrawable balance out after a deposit's sessions. */
  withdraw: number;
  /** The session (0-based, over the whole life) that pays 8-40 times its bets. */
  jackpotAt?: number;
  /** Days between deposits. */
  gap: () => number;
  /** Withdrawals the same day or the next (hours after the last session). */
  quick?: boolean;
  /** The turnover is wagered whatever the bonus requirement (a bonus hunter plays it through). */
  playThrough?: boolean;
}

/** A player's life on the platform, money following the balance (see the module's comment). */
function live(b: Builder, p: Person, rng: Random, h: Habit): void {
  const end = b.ctx.endMicros;
  let at = p.signup + Math.floor(rng.float(0.05, 36) * HOUR);
  let balance = 0;
  let locked = 0;
  let requirement = 0;
  let wagered = 0;
  let session = 0;
  let first = true;
  for (let j = 0; j < h.deposits && at < end; j++) {
    const d = round2(h.size());
    const dep = p.tx('deposit', d, at, { transaction_subtype: rng.pick(['card', 'card', 'e_wallet', 'wire']) });
    if (!dep) break;
    if (first && rng.chance(0.01)) {
      // A chargeback of the first deposit, learned days later.
      p.tx('adjustment', -d, at + Math.floor(rng.float(5, 25) * 24 * HOUR), { transaction_subtype: 'chargeback', note: `chargeback of ${String(dep.transaction_id)}` });
    } else if (!first && rng.chance(0.005)) {
      dep.status = 'reversed';
      at += Math.floor(h.gap() * 24 * HOUR);
      continue;
    }
    balance += d;
    if (first && h.bonus) {
      const bonus = round2(Math.min(d, 100));
      p.tx('bonus', bonus, at + 30_000_000, { transaction_subtype: 'welcome_bonus' });
      balance += bonus;
      locked = bonus;
      requirement = 35 * bonus;
      wagered = 0;
    }
    first = false;
    let turnover = d * h.turnover();
    if (h.playThrough && locked > 0) turnover = Math.max(turnover, requirement * rng.float(1.0, 1.3));
    const sessions = Math.max(1, h.sessions());
    // Play starts once the money (and the bonus, a few seconds later) is in the account.
    const day0 = Math.floor((at + 60_000_000) / MICROS_PER_DAY);
    let lastDay = day0;
    for (let s = 0; s < sessions && balance > 0.5; s++) {
      // Sessions in time order: a later one is never on an earlier day.
      const day = Math.max(lastDay, day0 + (h.quick ? 0 : Math.floor(s * rng.float(0.5, 1.5))));
      if (day > b.ctx.toDay) break;
      let bets = turnover / sessions;
      const rtp = session === h.jackpotAt ? rng.float(8, 40) : Math.max(0, 0.95 + rng.gauss() * 0.3);
      // Nobody loses more than the balance: a session that would is the one that empties it.
      if (bets * (1 - rtp) > balance) bets = balance / (1 - rtp);
      const wins = bets * rtp;
      balance += wins - bets;
      wagered += bets;
      session += 1;
      p.play(day, bets, wins);
      lastDay = day;
      if (locked > 0 && wagered >= requirement) locked = 0;
    }
    const withdrawable = balance - locked;
    if (withdrawable >= 10 && (rng.chance(h.withdraw) || withdrawable > 3 * d)) {
      const wAt = Math.max(at + HOUR, lastDay * MICROS_PER_DAY + Math.floor(rng.float(h.quick ? 20 : 18, h.quick ? 23.9 : 40) * HOUR));
      const amount = round2(withdrawable * rng.float(0.6, 1));
      if (p.tx('withdrawal', amount, wAt, { transaction_subtype: rng.pick(['wire', 'card', 'e_wallet']) })) {
        // Withdrawing before the bonus is wagered through forfeits it.
        balance -= locked + amount;
        locked = 0;
        // The next deposit's play is on a later day: a day's activity is one row, and the day of a
        // withdrawal then shows what was played before it.
        at = (Math.floor(wAt / MICROS_PER_DAY) + 1) * MICROS_PER_DAY;
      }
    }
    at = Math.max(at, lastDay * MICROS_PER_DAY + 20 * HOUR) + Math.floor(h.gap() * 24 * HOUR);
  }
}

const pickSize = (rng: Random, sizes: readonly number[]) => () => rng.pick(sizes);

function cleanIgaming(b: Builder, count: number, clean: Map<string, CleanShape>): void {
  const ctx = b.ctx;
  let small = 0;
  let smallLeft = 0;
  let i = 0;
  const person = (shape: CleanShape, fields: SpecRecord = {}, signup?: number): { p: Person; rng: Random } => {
    const rng = createRandom(deriveSeed(ctx.seed, 'fraud-shapes', 'clean', i));
    const country = pickCountry(rng);
    const currency = country.currency;
    const profile = customerProfile(rng, i + 1, country);
    // The tracker and family shapes set their own click ids and names.
    const at = signup ?? ctx.startMicros + Math.floor(rng.next() * (ctx.endMicros - ctx.startMicros));
    const p = new Person(b, `qc-${String(++i).padStart(6, '0')}`, at, currency, { ...profile, ...fields });
    clean.set(p.id, shape);
    return { p, rng };
  };
  const casual = (rng: Random): Habit => ({
    deposits: rng.int(1, 5), size: pickSize(rng, [10, 20, 20, 25, 50, 50, 100, 100, 150, 200]), turnover: () => Math.exp(rng.float(Math.log(0.6), Math.log(15))),
    sessions: () => rng.int(1, 4), bonus: rng.chance(0.4), withdraw: 0.3, gap: () => rng.float(1, 6),
  });
  while (i < count) {
    const u = b.rng.next();
    if (u < 0.18) { person('never_deposited'); continue; }
    if (u < 0.62) { const { p, rng } = person('casual'); live(b, p, rng, casual(rng)); continue; }
    if (u < 0.66) {
      const { p, rng } = person('changed_mind');
      live(b, p, rng, { deposits: 1, size: pickSize(rng, [20, 50, 100, 200, 500]), turnover: () => rng.float(0.05, 0.6), sessions: () => 1, bonus: false, withdraw: 1, quick: true, gap: () => 3 });
      continue;
    }
    if (u < 0.71) {
      const { p, rng } = person('quick_withdrawer');
      live(b, p, rng, { deposits: rng.int(1, 2), size: pickSize(rng, [50, 100, 200, 300, 500]), turnover: () => rng.float(0.15, 1), sessions: () => 1, bonus: false, withdraw: 1, quick: true, gap: () => rng.float(1, 4) });
      continue;
    }
    if (u < 0.73) {
      const { p, rng } = person('whale');
      live(b, p, rng, { deposits: rng.int(4, 10), size: () => Math.exp(rng.float(Math.log(1000), Math.log(20000))), turnover: () => rng.float(3, 20), sessions: () => rng.int(1, 3), bonus: false, withdraw: 0.6, gap: () => rng.float(0.5, 4) });
      continue;
    }
    if (u < 0.75) {
      const { p, rng } = person('big_winner');
      live(b, p, rng, { deposits: rng.int(1, 3), size: pickSize(rng, [20, 50, 100, 200]), turnover: () => rng.float(1, 10), sessions: () => rng.int(1, 3), bonus: rng.chance(0.5), withdraw: 0.5, jackpotAt: rng.int(0, 2), gap: () => rng.float(1, 5) });
      continue;
    }
    if (u < 0.79) {
      const { p, rng } = person('bonus_hunter');
      live(b, p, rng, { deposits: rng.int(1, 2), size: pickSize(rng, [20, 50, 100]), turnover: () => rng.float(1, 3), sessions: () => rng.int(2, 4), bonus: true, withdraw: 0.9, playThrough: true, gap: () => rng.float(2, 6) });
      continue;
    }
    if (u < 0.87) {
      // Affiliates with few customers: a new affiliate's first FTDs.
      if (smallLeft === 0) { small += 1; smallLeft = b.rng.int(1, 6); }
      smallLeft -= 1;
      const { p, rng } = person('small_affiliate', { affiliate_id: `aff-s-${small}` });
      live(b, p, rng, casual(rng));
      continue;
    }
    if (u < 0.93) {
      // A family: one surname and country, different first names, one affiliate.
      const size = b.rng.int(2, 4);
      const first = person('family');
      const surname = first.p.c.customer.last_name ?? `Fam${i}`;
      Object.assign(first.p.c.customer, { last_name: surname, first_name: `${String(first.p.c.customer.first_name ?? 'Ann')}a` });
      live(b, first.p, first.rng, casual(first.rng));
      for (let k = 1; k < size && i < count; k++) {
        const m = person('family', { affiliate_id: first.p.c.customer.affiliate_id, country_code: first.p.c.customer.country_code, last_name: surname }, Math.min(ctx.endMicros - HOUR, first.p.signup + Math.floor(b.rng.float(0.5, 48) * HOUR)));
        Object.assign(m.p.c.customer, { first_name: `${String(m.p.c.customer.first_name ?? 'Ben')}${'abcd'[k]}`, email: `${String(m.p.c.customer.first_name ?? 'x').toLowerCase()}${'abcd'[k]}.${String(surname).toLowerCase()}${i}@example.com` });
        live(b, m.p, m.rng, casual(m.rng));
      }
      continue;
    }
    if (u < 0.935) {
      // A tracker's unfilled macro on every registration of an affiliate for a while.
      const size = b.rng.int(8, 40);
      const click = b.rng.pick(['{clickid}', 'null', '%CLICK_ID%', '0', 'undefined']);
      const affiliate = b.rng.pick(AFFILIATES);
      const start = ctx.startMicros + Math.floor(b.rng.next() * (ctx.endMicros - ctx.startMicros) * 0.8);
      for (let k = 0; k < size && i < count; k++) {
        const m = person('tracker_click', { affiliate_id: affiliate, click_id: click }, Math.min(ctx.endMicros - HOUR, start + Math.floor(k * b.rng.float(1, 6) * HOUR)));
        live(b, m.p, m.rng, casual(m.rng));
      }
      continue;
    }
    const { p, rng } = person('casual');
    live(b, p, rng, casual(rng));
  }
}

function plantedIgaming(b: Builder, repeats: number, out: PlantedShape[]): void {
  const ctx = b.ctx;
  const rng = b.rng;
  const label = (rule: string, size: Size, n: number, customers: string[]) => out.push({ variant: 'igaming', rule, size, instance: `${rule}-${size}-${n}`, customers });
  const id = (rule: string, size: Size, n: number, k: number) => `fp-${rule.replace(/_/g, '')}-${size}-${n}-${k}`;
  /** A planted customer signed up on `day` at 08:00. */
  const fp = (cid: string, day: number, fields: SpecRecord, currency = 'USD', sendUsd = true) =>
    new Person(b, cid, b.at(day, 8), currency, { country_code: currency === 'EUR' ? 'DE' : currency === 'GBP' ? 'GB' : 'US', ...fields }, sendUsd);
  /** A first deposit well played, so that no other rule sees the customer. */
  const honest = (p: Person, day: number, usd: number) => { p.tx('deposit', usd, b.at(day, 10), { transaction_subtype: 'card' }); p.play(day, usd * 6, usd * 5.6); };
  const last = ctx.toDay - 7;
  for (let n = 1; n <= repeats; n++) {
    for (const [si, size] of SIZES.entries()) {
      // duplicate_identity: by e-mail, click id, or a rare name, in turn.
      const kind = (n + si) % 3;
      const accounts = size === 'smallest' ? 2 : size === 'medium' ? 3 : kind === 2 ? 3 : 5;
      const dup: string[] = [];
      const day = ctx.fromDay + rng.int(0, 20);
      for (let k = 1; k <= accounts; k++) {
        const fields: SpecRecord = { affiliate_id: rng.pick(AFFILIATES), first_name: `Fpn${n}${size}${k}`, last_name: `Dup${k}`, email: `fp.dup${n}.${size}.${k}@example.net` };
        if (kind === 0) fields.email = k === 1 ? `Fp.Dup${n}${size}+casino@GoogleMail.com` : `fp.dup${n}${size}${k === 2 ? '' : `+s${k}`}@gmail.com`.replace('fp.dup', 'fpdup');
        if (kind === 1) fields.click_id = `clk-fp-${n}-${size}`;
        if (kind === 2) Object.assign(fields, { first_name: `Fpname${n}${size}`, last_name: 'Rarename', country_code: 'AT' });
        const p = fp(id('duplicate_identity', size, n, k), day, fields);
        p.c.customer.signup_date = formatMicros(b.at(day, 8 + k * 3), 'ms');
        p.c.customer.last_modified_date = p.c.customer.signup_date;
        honest(p, day, 100);
        dup.push(p.id);
      }
      label('duplicate_identity', size, n, dup);

      // cpa_farming: one affiliate-month, FTDs at the baseline with little play.
      {
        const [ftds, farmed]: [number, number] = size === 'smallest' ? [10, 5] : size === 'medium' ? [12, 9] : [30, 27];
        const aff = `aff-fp-farm-${size}-${n}`;
        const list: string[] = [];
        for (let k = 1; k <= ftds; k++) {
          const d = ctx.fromDay + ((k * 2 + n) % (last - ctx.fromDay));
          const p = fp(id('cpa_farming', size, n, k), d, { affiliate_id: aff, email: `fp.farm${n}.${size}.${k}@example.net` });
          if (k <= farmed) {
            const dep = 20 + rng.int(0, 5);
            p.tx('deposit', dep, b.at(d, 10), { transaction_subtype: 'card' });
            p.play(d, 5, 4);
            list.push(p.id);
          } else honest(p, d, 150);
        }
        label('cpa_farming', size, n, list);
      }

      // bonus_bust_out: the bonus taken out within days, barely played.
      {
        const [dep, bonus, bet, out, currency]: [number, number, number, number, string] = size === 'smallest' ? [20, 20, 10, 40, 'USD'] : size === 'medium' ? [108, 108, 65, 194, 'EUR'] : [500, 500, 200, 950, 'USD'];
        const d = ctx.fromDay + 2 + rng.int(0, 20);
        const p = fp(id('bonus_bust_out', size, n, 1), d, { affiliate_id: rng.pick(AFFILIATES), email: `fp.bust${n}.${size}@example.net` }, currency, currency === 'USD');
        p.tx('deposit', dep, b.at(d, 10), { transaction_subtype: 'card' });
        p.tx('bonus', bonus, b.at(d, 11), { transaction_subtype: 'welcome_bonus' });
        p.play(d, bet, bet * 0.9);
        p.tx('withdrawal', out, b.at(d + 1, 12), { transaction_subtype: 'wire' });
        label('bonus_bust_out', size, n, [p.id]);
      }

      // deposit_cycling: money in and out, barely played.
      {
        const d = ctx.fromDay + 1 + rng.int(0, 10);
        if (size === 'smallest') {
          const p = fp(id('deposit_cycling', size, n, 1), d, { affiliate_id: rng.pick(AFFILIATES), email: `fp.cycle${n}.${size}@example.net` });
          p.tx('deposit', 500, b.at(d, 9), { transaction_subtype: 'card' });
          p.play(d, 6, 5);
          p.tx('withdrawal', 490, b.at(d, 18), { transaction_subtype: 'wire' });
          p.tx('deposit', 600, b.at(d + 2, 9), { transaction_subtype: 'card' });
          p.play(d + 2, 4, 3);
          p.tx('withdrawal', 590, b.at(d + 2, 19), { transaction_subtype: 'wire' });
          label('deposit_cycling', size, n, [p.id]);
        } else {
          const [trips, dep, out, bet, currency]: [number, number, number, number, string] = size === 'medium' ? [3, 200, 190, 20, 'USD'] : [6, 1270, 1245, 64, 'GBP'];
          const p = fp(id('deposit_cycling', size, n, 1), d, { affiliate_id: rng.pick(AFFILIATES), email: `fp.cycle${n}.${size}@example.net` }, currency);
          for (let k = 0; k < trips; k++) {
            const day = d + k * 3;
            p.tx('deposit', dep, b.at(day, 9), { transaction_subtype: 'card' });
            p.play(day, bet, bet * 0.9);
            p.tx('withdrawal', out, b.at(day + 1, 9), { transaction_subtype: 'wire' });
          }
          label('deposit_cycling', size, n, [p.id]);
        }
      }

      // chargeback_rate: an affiliate's FTDs of a month, many reversed or charged back.
      {
        const [ftds, hit]: [number, number] = size === 'smallest' ? [10, 6] : size === 'medium' ? [25, 7] : [60, 20];
        const aff = `aff-fp-cb-${size}-${n}`;
        const list: string[] = [];
        for (let k = 1; k <= ftds; k++) {
          const d = ctx.fromDay + 2 + ((k * 3 + n) % 20);
          const p = fp(id('chargeback_rate', size, n, k), d, { affiliate_id: aff, email: `fp.cb${n}.${size}.${k}@example.net` });
          const reversed = k <= hit && k % 2 === 0;
          const dep = p.tx('deposit', 100, b.at(d, 10), { transaction_subtype: 'card', ...(reversed ? { status: 'reversed' } : {}) });
          p.play(d, 600, 560);
          if (k <= hit && !reversed) p.tx('adjustment', -100, b.at(Math.min(d + 3, ctx.toDay), 15), { transaction_subtype: 'chargeback', note: `chargeback of ${String(dep?.transaction_id)}` });
          if (k <= hit) list.push(p.id);
        }
        label('chargeback_rate', size, n, list);
      }

      // ftd_spike: one FTD every second day, then many on one day.
      {
        const aff = `aff-fp-spike-${size}-${n}`;
        const spikeDay = ctx.toDay - 1 - si;
        let k = 0;
        for (let d = Math.max(ctx.fromDay, spikeDay - 28); d < spikeDay; d += 2) honest(fp(id('ftd_spike', size, n, ++k), d, { affiliate_id: aff, email: `fp.spike${n}.${size}.${k}@example.net` }), d, 100);
        const list: string[] = [];
        for (let j = 0; j < (size === 'smallest' ? 15 : size === 'medium' ? 20 : 40); j++) {
          const p = fp(id('ftd_spike', size, n, ++k), spikeDay, { affiliate_id: aff, email: `fp.spike${n}.${size}.${k}@example.net` });
          honest(p, spikeDay, 100);
          list.push(p.id);
        }
        label('ftd_spike', size, n, list);
      }
    }
  }
}

function plantedProp(b: Builder, repeats: number, out: PlantedShape[]): void {
  const ctx = b.ctx;
  const rng = b.rng;
  const label = (rule: string, size: Size, n: number, customers: string[]) => out.push({ variant: 'prop-trading', rule, size, instance: `${rule}-${size}-${n}`, customers });
  const id = (rule: string, size: Size, n: number, k: number) => `fp-${rule.replace(/_/g, '')}-${size}-${n}-${k}`;
  const trader = (cid: string, day: number, fields: SpecRecord) => {
    const p = new Person(b, cid, b.at(day, 8), 'USD', { challenge_type: 'standard', account_size: 50000, phase: 'phase_1', country_code: 'GB', ...fields });
    p.tx('challenge_fee', 299, b.at(day, 9), { transaction_subtype: 'phase_1_fee' });
    return p;
  };
  const instruments = ['EURUSD', 'GBPUSD', 'XAUUSD', 'NAS100', 'US30', 'GER40'];
  const weekdays = (start: number, count: number): number[] => {
    const days: number[] = [];
    for (let d = start; days.length < count && d <= ctx.toDay; d++) if (![0, 6].includes(new Date(d * 86_400_000).getUTCDay())) days.push(d);
    return days;
  };
  for (let n = 1; n <= repeats; n++) {
    for (const size of SIZES) {
      {
        const days = size === 'smallest' ? 3 : size === 'medium' ? 5 : 10;
        const start = ctx.fromDay + 1 + rng.int(0, 12);
        const a = trader(id('mirrored_pnl', size, n, 1), start, { affiliate_id: rng.pick(AFFILIATES), email: `fp.mirror${n}.${size}.a@example.net` });
        const z = trader(id('mirrored_pnl', size, n, 2), start, { affiliate_id: rng.pick(AFFILIATES), email: `fp.mirror${n}.${size}.b@example.net` });
        const instrument = rng.pick(instruments);
        for (const d of weekdays(start + 1, days)) {
          const pnl = 400 + rng.int(0, 800);
          const lots = 2 + rng.int(0, 200) / 100;
          a.trade(d, instrument, lots, pnl);
          z.trade(d, instrument, lots * 1.02, -pnl * 0.96);
        }
        label('mirrored_pnl', size, n, [a.id, z.id]);
      }
      {
        const days = size === 'smallest' ? 3 : size === 'medium' ? 5 : 8;
        const start = ctx.fromDay + 1 + rng.int(0, 12);
        const aff = rng.pick(AFFILIATES);
        const a = trader(id('copy_trading', size, n, 1), start, { affiliate_id: aff, email: `fp.copy${n}.${size}.a@example.net` });
        const z = trader(id('copy_trading', size, n, 2), start, { affiliate_id: aff, email: `fp.copy${n}.${size}.b@example.net` });
        for (const d of weekdays(start + 1, days)) {
          const instrument = instruments[(n + d) % instruments.length] as string;
          const pnl = (rng.chance(0.5) ? 1 : -1) * (150 + rng.int(0, 600));
          const lots = 1 + rng.int(0, 300) / 100;
          a.trade(d, instrument, lots, pnl);
          z.trade(d, instrument, lots, pnl * 1.01);
        }
        label('copy_trading', size, n, [a.id, z.id]);
      }
      {
        const [days, linked]: [number, number] = size === 'smallest' ? [6.5, 1] : size === 'medium' ? [3, 1] : [1, 3];
        const start = ctx.fromDay + 1 + rng.int(0, 20);
        const a = trader(id('fast_funding', size, n, 1), start, { affiliate_id: rng.pick(AFFILIATES), email: `Fp.Fast${n}${size}+funded@gmail.com` });
        Object.assign(a.c.customer, { phase: 'funded', last_modified_date: formatMicros(Math.min(a.signup + Math.floor(days * 24 * HOUR), ctx.endMicros - 1), 'ms') });
        const list = [a.id];
        for (let k = 2; k <= linked + 1; k++) list.push(trader(id('fast_funding', size, n, k), start, { affiliate_id: rng.pick(AFFILIATES), email: `fpfast${n}${size}${k === 2 ? '' : `+${k}`}@gmail.com` }).id);
        label('fast_funding', size, n, list);
      }
      {
        const [fees, refunds]: [number, number] = size === 'smallest' ? [12, 4] : size === 'medium' ? [10, 6] : [10, 10];
        const aff = `aff-fp-refund-${size}-${n}`;
        const list: string[] = [];
        for (let k = 1; k <= fees; k++) {
          const day = ctx.fromDay + 1 + ((k * 2) % 24);
          const p = trader(id('refund_after_fee', size, n, k), day, { affiliate_id: aff, email: `fp.refund${n}.${size}.${k}@example.net` });
          if (k <= refunds) {
            p.tx('refund', 299, b.at(day + 2, 12), { transaction_subtype: 'cancellation', note: `refund of ${String(p.c.transactions[0]?.transaction_id)}` });
            list.push(p.id);
          }
        }
        label('refund_after_fee', size, n, list);
      }
    }
  }
}

/**
 * The population of one seed: `customers` clean iGaming customers and `propCustomers` clean
 * traders, and `repeats` instances of every rule at every size. Deterministic for a seed and range.
 */
export function shapedPopulation(ctx: GenerationContext, options: { customers: number; propCustomers: number; repeats: number }): ShapedPopulation[] {
  const igaming = new Builder(ctx, createRandom(deriveSeed(ctx.seed, 'fraud-shapes', 'igaming')));
  const igClean = new Map<string, CleanShape>();
  cleanIgaming(igaming, options.customers, igClean);
  const igPlanted: PlantedShape[] = [];
  plantedIgaming(igaming, options.repeats, igPlanted);

  const prop = new Builder(ctx, createRandom(deriveSeed(ctx.seed, 'fraud-shapes', 'prop')));
  const propClean = new Map<string, CleanShape>();
  const propGenerated: GeneratedCustomer[] = [];
  for (let i = 0; i < options.propCustomers; i++) {
    const g = generatePropTradingCustomer(ctx, i);
    propGenerated.push(g);
    propClean.set(g.customer.customer_id as string, 'trader');
  }
  const propPlanted: PlantedShape[] = [];
  plantedProp(prop, options.repeats, propPlanted);
  return [
    { variant: 'igaming', generated: [...igaming.generated.values()], planted: igPlanted, clean: igClean },
    { variant: 'prop-trading', generated: [...propGenerated, ...prop.generated.values()], planted: propPlanted, clean: propClean },
  ];
}
