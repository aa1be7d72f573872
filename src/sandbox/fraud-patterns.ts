/**
 * Labelled fraud patterns for the sandbox: instances of each detection rule (docs/fraud.md),
 * added to otherwise clean generated traffic, so detection can be measured (recall per rule on the
 * injected instances, false flags on the clean customers). Each instance has its own customers
 * (ids `fp-…`) and, for the per-affiliate rules, its own affiliate (`aff-fp-…`); the label names
 * the rule and the customers a flag must cover.
 *
 * The patterns are built with a margin inside the default thresholds of config/fraud.yaml:
 * - duplicate_identity: 2 or 3 accounts of different affiliates sharing one identity key, in turn
 *   a normalized e-mail (`Fp.Ab+casino@GoogleMail.com` ~ `fpab@gmail.com`), first + last name +
 *   country, or a click_id.
 * - cpa_farming: an affiliate with 12 FTDs in one month, 9 of them 21 USD with 5 USD wagered in
 *   7 days (the others 150 USD, well played).
 * - bonus_bust_out: 100 USD deposited, a 100 USD bonus, 180 USD withdrawn the next day (more
 *   than the deposits), 60 USD wagered.
 * - deposit_cycling: 3 cycles of 200 USD deposited and 190 withdrawn the next day, 20 wagered.
 * - chargeback_rate: an affiliate with 25 depositors in 20 days, 7 of them charged back (28 %,
 *   above 10 % with 95 % confidence).
 * - ftd_spike: an affiliate with one FTD every second day, then 20 FTDs on one day.
 * - mirrored_pnl: two accounts, 3 days, one instrument, P&L +x and −0.96x, lots within 2 %, and
 *   no other common days.
 * - copy_trading: two accounts with the same instrument, lots and P&L on 4 days.
 * - fast_funding: a trader funded 2 days after signup whose e-mail is another account's.
 * - refund_after_fee: an affiliate with 4 challenge fees, all 4 refunded in one month.
 */
import type { SpecRecord, Variant } from '../types.js';
import { round2, type GeneratedCustomer, type GenerationContext } from './generate-common.js';
import { formatDay, formatMicros, MICROS_PER_DAY } from './instant.js';
import { createRandom, deriveSeed, type Random } from './prng.js';

export const PATTERN_RULES = {
  igaming: ['duplicate_identity', 'cpa_farming', 'bonus_bust_out', 'deposit_cycling', 'chargeback_rate', 'ftd_spike'],
  'prop-trading': ['mirrored_pnl', 'copy_trading', 'fast_funding', 'refund_after_fee'],
} as const satisfies Record<Variant, readonly string[]>;

/** One injected instance: a flag of `rule` must cover every one of `customers`. */
export interface InjectedPattern {
  variant: Variant;
  rule: string;
  instance: string;
  affiliate: string | null;
  customers: string[];
}

export interface PatternSet {
  variant: Variant;
  generated: GeneratedCustomer[];
  patterns: InjectedPattern[];
}

const HOUR = 3_600_000_000;

/** Builds one variant's records day by day within the generation range. */
class Builder {
  readonly generated = new Map<string, GeneratedCustomer>();
  private txCount = 0;

  constructor(readonly ctx: GenerationContext, readonly variant: Variant, readonly rng: Random) {}

  /** A day number inside the range: `offset` days from the start (negative: from the end). */
  day(offset: number): number {
    const d = offset >= 0 ? this.ctx.fromDay + offset : this.ctx.toDay + 1 + offset;
    return Math.min(Math.max(d, this.ctx.fromDay), this.ctx.toDay);
  }

  at(day: number, hour: number): string {
    return formatMicros(day * MICROS_PER_DAY + hour * HOUR + this.rng.int(0, 3_599_999) * 1000, 'ms');
  }

  customer(id: string, day: number, fields: SpecRecord): GeneratedCustomer {
    const signup = this.at(day, 8);
    const c: GeneratedCustomer = {
      customer: { customer_id: id, signup_date: signup, last_modified_date: signup, country_code: 'DE', kyc_status_id: 'approved', ...fields },
      transactions: [],
      activity: [],
    };
    this.generated.set(id, c);
    return c;
  }

  tx(c: GeneratedCustomer, type: string, usd: number, at: string, extra: SpecRecord = {}): SpecRecord {
    const id = `fpt-${String(++this.txCount).padStart(6, '0')}`;
    const tx: SpecRecord = {
      transaction_id: id, customer_id: c.customer.customer_id, transaction_type: type, amount_currency: usd, currency: 'USD', amount_usd: usd,
      transaction_date: at, status: 'approved', updated_at: at, ...extra,
    };
    c.transactions.push(tx);
    return tx;
  }

  play(c: GeneratedCustomer, day: number, bets: number): void {
    const wins = round2(bets * 0.9);
    c.activity.push({ date: formatDay(day), customer_id: c.customer.customer_id, game_type: 'slots', currency: 'USD', bets_count: Math.max(1, Math.round(bets)), total_bets: round2(bets), wins, ggr: round2(bets - wins) });
  }

  trade(c: GeneratedCustomer, day: number, instrument: string, lots: number, pnl: number): void {
    c.activity.push({ date: formatDay(day), customer_id: c.customer.customer_id, instrument, lots_traded: round2(lots), pnl: round2(pnl), currency: 'USD', drawdown: 1, max_drawdown: 2 });
  }
}

/** Days [first, last] of the calendar month around the range's middle, clipped to the range. */
function middleMonth(ctx: GenerationContext): [number, number] {
  const mid = Math.floor((ctx.fromDay + ctx.toDay) / 2);
  const date = new Date(mid * 86_400_000);
  const first = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1) / 86_400_000;
  const last = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 0) / 86_400_000;
  return [Math.max(first, ctx.fromDay), Math.min(last, ctx.toDay)];
}

function igamingPatterns(b: Builder, perRule: number): InjectedPattern[] {
  const out: InjectedPattern[] = [];
  const label = (rule: string, n: number, affiliate: string | null, customers: string[]) =>
    out.push({ variant: 'igaming', rule, instance: `${rule}-${n}`, affiliate, customers });
  const id = (rule: string, n: number, k: number) => `fp-${rule.replace(/_/g, '')}-${n}-${k}`;
  /** A first deposit of `usd` with healthy play, so that no other rule sees the customer. */
  const honestPlayer = (c: GeneratedCustomer, day: number, usd: number) => {
    b.tx(c, 'deposit', usd, b.at(day, 10), { transaction_subtype: 'card' });
    b.play(c, day, usd * 6);
  };
  const [monthFirst, monthLast] = middleMonth(b.ctx);
  const monthDays = monthLast - monthFirst + 1;
  // A regular player with a row every day: the range's activity is loaded day by day even without
  // clean traffic, so the windows of the patterns can be judged (a day without any activity loaded
  // is unknown, not "no play").
  if (perRule > 0) {
    const regular = b.customer('fp-regular-1', b.ctx.fromDay, { affiliate_id: 'aff-101', email: 'fp.regular@example.net' });
    b.tx(regular, 'deposit', 100, b.at(b.ctx.fromDay, 10), { transaction_subtype: 'card' });
    for (let d = b.ctx.fromDay; d <= b.ctx.toDay; d++) b.play(regular, d, 300);
  }

  for (let n = 1; n <= perRule; n++) {
    // duplicate_identity: the same person under 2 or 3 accounts, each with another affiliate.
    const kind = n % 3;
    const accounts = 2 + (n % 2);
    const dup: string[] = [];
    for (let k = 1; k <= accounts; k++) {
      const cid = id('duplicate_identity', n, k);
      const fields: SpecRecord = { affiliate_id: `aff-${101 + ((n + k) % 12)}`, first_name: `Fpn${n}k${k}`, last_name: `Dup${k}`, email: `fp.dup${n}.${k}@example.net` };
      if (kind === 0) fields.email = k === 1 ? `Fp.Dup${n}+casino@GoogleMail.com` : `fpdup${n}${k === 2 ? '' : '+second'}@gmail.com`;
      if (kind === 1) Object.assign(fields, { first_name: `Fpname${n}`, last_name: 'Duplicate', country_code: 'AT' });
      if (kind === 2) fields.click_id = `clk-fp-dup-${n}`;
      const c = b.customer(cid, b.day(n % 20), fields);
      honestPlayer(c, b.day(n % 20), 100);
      dup.push(cid);
    }
    label('duplicate_identity', n, null, dup);

    // cpa_farming: 12 FTDs of one affiliate in one month, 9 at the baseline with little play.
    const farmAff = `aff-fp-farm-${n}`;
    const farmed: string[] = [];
    for (let k = 1; k <= 12; k++) {
      // The 7 days after each first deposit lie within the range: detection judges a window only
      // once its days' activity is loaded.
      const day = monthFirst + ((k * 2 + n) % Math.max(1, Math.min(monthDays, b.ctx.toDay - 6 - monthFirst + 1)));
      const c = b.customer(id('cpa_farming', n, k), day, { affiliate_id: farmAff, email: `fp.farm${n}.${k}@example.net` });
      if (k <= 9) {
        b.tx(c, 'deposit', 21, b.at(day, 10), { transaction_subtype: 'card' });
        b.play(c, day, 5);
        farmed.push(c.customer.customer_id as string);
      } else honestPlayer(c, day, 150);
    }
    label('cpa_farming', n, farmAff, farmed);

    // bonus_bust_out: bonus, withdrawal the next day, little wagering.
    {
      const day = b.day(2 + (n % 20));
      const c = b.customer(id('bonus_bust_out', n, 1), day, { affiliate_id: `aff-${101 + (n % 12)}`, email: `fp.bust${n}@example.net` });
      b.tx(c, 'deposit', 100, b.at(day, 10), { transaction_subtype: 'card' });
      b.tx(c, 'bonus', 100, b.at(day, 11), { transaction_subtype: 'welcome_bonus' });
      b.play(c, day, 60);
      b.tx(c, 'withdrawal', 180, b.at(day + 1, 12), { transaction_subtype: 'wire' });
      label('bonus_bust_out', n, null, [c.customer.customer_id as string]);
    }

    // deposit_cycling: 3 cycles of deposit → withdrawal the next day, little play.
    {
      const start = b.day(1 + (n % 15));
      const c = b.customer(id('deposit_cycling', n, 1), start, { affiliate_id: `aff-${101 + ((n + 5) % 12)}`, email: `fp.cycle${n}@example.net` });
      for (let k = 0; k < 3; k++) {
        const day = start + k * 3;
        b.tx(c, 'deposit', 200, b.at(day, 9), { transaction_subtype: 'card' });
        b.play(c, day, 20);
        b.tx(c, 'withdrawal', 190, b.at(day + 1, 9), { transaction_subtype: 'wire' });
      }
      label('deposit_cycling', n, null, [c.customer.customer_id as string]);
    }

    // chargeback_rate: 25 depositors of one affiliate within 20 days, 7 charged back (28%).
    {
      const aff = `aff-fp-cb-${n}`;
      const hit: string[] = [];
      for (let k = 1; k <= 25; k++) {
        const day = b.day(3 + (k % 20));
        const c = b.customer(id('chargeback_rate', n, k), day, { affiliate_id: aff, email: `fp.cb${n}.${k}@example.net` });
        const dep = b.tx(c, 'deposit', 100, b.at(day, 10), { transaction_subtype: 'card' });
        b.play(c, day, 600);
        if (k <= 7) {
          b.tx(c, 'adjustment', -100, b.at(Math.min(day + 3, b.ctx.toDay), 15), { transaction_subtype: 'chargeback', note: `chargeback of ${String(dep.transaction_id)}` });
          hit.push(c.customer.customer_id as string);
        }
      }
      label('chargeback_rate', n, aff, hit);
    }

    // ftd_spike: one FTD every second day, then 20 on one day near the end.
    {
      const aff = `aff-fp-spike-${n}`;
      const spikeDay = b.day(-2);
      let k = 0;
      for (let d = Math.max(b.ctx.fromDay, spikeDay - 28); d < spikeDay; d += 2) {
        const c = b.customer(id('ftd_spike', n, ++k), d, { affiliate_id: aff, email: `fp.spike${n}.${k}@example.net` });
        honestPlayer(c, d, 100);
      }
      const spike: string[] = [];
      for (let j = 0; j < 20; j++) {
        const c = b.customer(id('ftd_spike', n, ++k), spikeDay, { affiliate_id: aff, email: `fp.spike${n}.${k}@example.net` });
        honestPlayer(c, spikeDay, 100);
        spike.push(c.customer.customer_id as string);
      }
      label('ftd_spike', n, aff, spike);
    }
  }
  return out;
}

function propPatterns(b: Builder, perRule: number): InjectedPattern[] {
  const out: InjectedPattern[] = [];
  const label = (rule: string, n: number, affiliate: string | null, customers: string[]) =>
    out.push({ variant: 'prop-trading', rule, instance: `${rule}-${n}`, affiliate, customers });
  const id = (rule: string, n: number, k: number) => `fp-${rule.replace(/_/g, '')}-${n}-${k}`;
  const trader = (cid: string, day: number, fields: SpecRecord) => {
    const c = b.customer(cid, day, { challenge_type: 'standard', account_size: 50000, phase: 'phase_1', ...fields });
    b.tx(c, 'challenge_fee', 299, b.at(day, 9), { transaction_subtype: 'phase_1_fee' });
    return c;
  };
  const instruments = ['EURUSD', 'GBPUSD', 'XAUUSD', 'NAS100', 'US30', 'GER40'];
  /** Weekdays from `start`, `count` of them. */
  const weekdays = (start: number, count: number): number[] => {
    const days: number[] = [];
    for (let d = start; days.length < count && d <= b.ctx.toDay; d++) if (![0, 6].includes(new Date(d * 86_400_000).getUTCDay())) days.push(d);
    return days;
  };

  for (let n = 1; n <= perRule; n++) {
    // mirrored_pnl: a hedged pair.
    {
      const start = b.day(2 + (n % 15));
      const a = trader(id('mirrored_pnl', n, 1), start, { affiliate_id: `aff-${101 + (n % 12)}`, email: `fp.mirror${n}.a@example.net` });
      const z = trader(id('mirrored_pnl', n, 2), start, { affiliate_id: `aff-${101 + ((n + 3) % 12)}`, email: `fp.mirror${n}.b@example.net` });
      const instrument = instruments[n % instruments.length] as string;
      for (const d of weekdays(start + 1, 3)) {
        const pnl = 400 + b.rng.int(0, 800);
        const lots = 2 + b.rng.int(0, 200) / 100;
        b.trade(a, d, instrument, lots, pnl);
        b.trade(z, d, instrument, lots * 1.02, -pnl * 0.96);
      }
      label('mirrored_pnl', n, null, [a.customer.customer_id as string, z.customer.customer_id as string]);
    }

    // copy_trading: identical days.
    {
      const start = b.day(3 + (n % 12));
      const a = trader(id('copy_trading', n, 1), start, { affiliate_id: `aff-${101 + ((n + 1) % 12)}`, email: `fp.copy${n}.a@example.net` });
      const z = trader(id('copy_trading', n, 2), start, { affiliate_id: `aff-${101 + ((n + 1) % 12)}`, email: `fp.copy${n}.b@example.net` });
      for (const d of weekdays(start + 1, 4)) {
        const instrument = instruments[(n + d) % instruments.length] as string;
        const pnl = (b.rng.chance(0.5) ? 1 : -1) * (150 + b.rng.int(0, 600));
        const lots = 1 + b.rng.int(0, 300) / 100;
        b.trade(a, d, instrument, lots, pnl);
        b.trade(z, d, instrument, lots, pnl * 1.01);
      }
      label('copy_trading', n, null, [a.customer.customer_id as string, z.customer.customer_id as string]);
    }

    // fast_funding: funded 2 days after signup, sharing an e-mail with another account.
    {
      const start = b.day(1 + (n % 20));
      const a = trader(id('fast_funding', n, 1), start, { affiliate_id: `aff-${101 + ((n + 2) % 12)}`, email: `Fp.Fast${n}+funded@gmail.com` });
      const funded = b.at(Math.min(start + 2, b.ctx.toDay), 20);
      Object.assign(a.customer, { phase: 'funded', last_modified_date: funded });
      const z = trader(id('fast_funding', n, 2), start, { affiliate_id: `aff-${101 + ((n + 7) % 12)}`, email: `fpfast${n}@gmail.com` });
      label('fast_funding', n, a.customer.affiliate_id as string, [a.customer.customer_id as string, z.customer.customer_id as string]);
    }

    // refund_after_fee: 4 fees refunded within one month by one affiliate's customers.
    {
      const aff = `aff-fp-refund-${n}`;
      const [first, last] = middleMonth(b.ctx);
      const refunded: string[] = [];
      for (let k = 1; k <= 4; k++) {
        const day = Math.min(first + k * 2, last - 2);
        const c = trader(id('refund_after_fee', n, k), day, { affiliate_id: aff, email: `fp.refund${n}.${k}@example.net` });
        b.tx(c, 'refund', 299, b.at(day + 2, 12), { transaction_subtype: 'cancellation', note: `refund of ${String(c.transactions[0]?.transaction_id)}` });
        refunded.push(c.customer.customer_id as string);
      }
      label('refund_after_fee', n, aff, refunded);
    }
  }
  return out;
}

/** `perRule` instances of every rule of each variant, deterministic for a seed and range. */
export function generateFraudPatterns(ctx: GenerationContext, perRule: number): PatternSet[] {
  if (!Number.isInteger(perRule) || perRule < 0) throw new Error(`fraud patterns: a whole number ≥ 0 per rule, got ${perRule}`);
  const sets: PatternSet[] = [];
  for (const variant of ['igaming', 'prop-trading'] as const) {
    const b = new Builder(ctx, variant, createRandom(deriveSeed(ctx.seed, 'fraud-patterns', variant)));
    const patterns = perRule === 0 ? [] : variant === 'igaming' ? igamingPatterns(b, perRule) : propPatterns(b, perRule);
    sets.push({ variant, generated: [...b.generated.values()], patterns });
  }
  return sets;
}
