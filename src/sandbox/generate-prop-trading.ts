/**
 * Generated prop-trading data: a trader's challenge account (type, size, phase), its money
 * movements (challenge and reset fees, payouts, refunds, adjustments) and its trading activity per
 * day and instrument while the account is in an evaluation phase or funded.
 */
import type { SpecRecord } from '../types.js';
import {
  customerProfile,
  dayOfMicros,
  fromUsd,
  pickCountry,
  randomMicros,
  round2,
  seconds,
  settle,
  stamp,
  type Status,
  type GeneratedCustomer,
  type GenerationContext,
} from './generate-common.js';
import { formatDay, weekday } from './instant.js';
import { createRandom, deriveSeed, type Random } from './prng.js';

const DAY_SECONDS = 86_400;

const CHALLENGE_TYPES: readonly (readonly [string, number])[] = [['standard', 50], ['aggressive', 15], ['rapid', 20], ['instant_funding', 15]];
const ACCOUNT_SIZES: readonly (readonly [number, number])[] = [[5000, 10], [10000, 25], [25000, 25], [50000, 20], [100000, 15], [200000, 5]];
/** Challenge fee in USD by account size, and its markup by challenge type. */
const FEE_USD: Readonly<Record<number, number>> = { 5000: 49, 10000: 99, 25000: 199, 50000: 299, 100000: 499, 200000: 999 };
const TYPE_FACTOR: Readonly<Record<string, number>> = { standard: 1, aggressive: 1.2, rapid: 1.1, instant_funding: 3 };
const INSTRUMENTS = ['EURUSD', 'GBPUSD', 'USDJPY', 'XAUUSD', 'NAS100', 'US30', 'GER40', 'BTCUSD', 'ETHUSD'];
/** Only crypto trades at weekends. */
const CRYPTO = new Set(['BTCUSD', 'ETHUSD']);

type Phase = 'phase_1' | 'phase_2' | 'funded' | 'failed';

/** A stretch in which the account trades; drawdown is measured from its start. */
interface TradingPeriod {
  start: number;
  end: number;
}

export function propTradingCustomerId(index: number): string {
  return `ptc-${String(index + 1).padStart(6, '0')}`;
}

export function generatePropTradingCustomer(ctx: GenerationContext, index: number): GeneratedCustomer {
  const rng = createRandom(deriveSeed(ctx.seed, 'prop-trading', index));
  const customerId = propTradingCustomerId(index);
  const country = pickCountry(rng);
  const payCurrency = rng.weighted<string>([['USD', 80], ['EUR', 12], ['GBP', 8]]);
  const challengeType = rng.weighted(CHALLENGE_TYPES);
  const accountSize = rng.weighted(ACCOUNT_SIZES);
  const feeUsd = round2((FEE_USD[accountSize] ?? 99) * (TYPE_FACTOR[challengeType] ?? 1));
  const signup = randomMicros(rng, ctx.startMicros, ctx.endMicros);
  const profile = customerProfile(rng, index + 1, country);

  const transactions: SpecRecord[] = [];
  // A transaction after the range has not happened yet.
  const add = (type: string, subtype: string | undefined, usd: number, at: number, status: Status, batchHour?: number, note?: string): SpecRecord | undefined => {
    if (at >= ctx.endMicros) return undefined;
    const date = stamp(rng, at);
    const settled = settle(rng, ctx, at, status, batchHour);
    const tx: SpecRecord = {
      transaction_id: `ptt-${String(index + 1).padStart(6, '0')}-${String(transactions.length + 1).padStart(3, '0')}`,
      customer_id: customerId,
      transaction_type: type,
      amount_currency: fromUsd(usd, payCurrency),
      currency: payCurrency,
      transaction_date: date,
      status: settled.status,
      amount_usd: usd,
    };
    if (subtype !== undefined) tx.transaction_subtype = subtype;
    if (note !== undefined) tx.note = note;
    // Unchanged since it was written: the same text, so updated_at is never before transaction_date.
    tx.updated_at = settled.at === at ? date : stamp(rng, settled.at);
    transactions.push(tx);
    return tx;
  };

  // The challenge is bought right after signup; a declined card is retried.
  const feeSubtype = challengeType === 'instant_funding' ? 'instant_funding_fee' : 'phase_1_fee';
  let feeAt = signup + seconds(rng, 5, 120);
  let fee = add('challenge_fee', feeSubtype, feeUsd, feeAt, rng.weighted<Status>([['approved', 92], ['declined', 5], ['pending', 3]]));
  if (fee?.status === 'declined') {
    feeAt += seconds(rng, 60, 1800);
    if (feeAt < ctx.endMicros) fee = add('challenge_fee', feeSubtype, feeUsd, feeAt, 'approved');
  }

  const events: { at: number; phase: Phase }[] = [{ at: signup, phase: challengeType === 'instant_funding' ? 'funded' : 'phase_1' }];
  const periods: TradingPeriod[] = [];
  let fundedAt: number | undefined;
  if (fee?.status === 'approved') {
    let start = feeAt;
    for (let resets = 0; start < ctx.endMicros; ) {
      if (challengeType === 'instant_funding') {
        fundedAt = start;
        periods.push({ start, end: ctx.endMicros });
        break;
      }
      const end1 = start + rng.int(3, 20) * DAY_SECONDS * 1_000_000 + seconds(rng, 0, DAY_SECONDS);
      periods.push({ start, end: Math.min(end1, ctx.endMicros) });
      if (end1 >= ctx.endMicros) break;
      let failedAt: number | undefined;
      if (rng.chance(0.45)) {
        events.push({ at: end1, phase: 'phase_2' });
        if (rng.chance(0.3)) add('challenge_fee', 'phase_2_fee', round2(feeUsd * 0.25), end1 + seconds(rng, 60, 3600), 'approved');
        const end2 = end1 + rng.int(3, 20) * DAY_SECONDS * 1_000_000 + seconds(rng, 0, DAY_SECONDS);
        periods.push({ start: end1, end: Math.min(end2, ctx.endMicros) });
        if (end2 >= ctx.endMicros) break;
        if (rng.chance(0.55)) {
          events.push({ at: end2, phase: 'funded' });
          fundedAt = end2;
          periods.push({ start: end2, end: ctx.endMicros });
          break;
        }
        failedAt = end2;
      } else {
        failedAt = end1;
      }
      events.push({ at: failedAt, phase: 'failed' });
      // A failed challenge is sometimes reset (a new phase 1 for the reset fee).
      if (resets >= 2 || !rng.chance(0.35)) break;
      const resetAt = failedAt + seconds(rng, 600, 3 * DAY_SECONDS);
      if (resetAt >= ctx.endMicros) break;
      add('reset_fee', 'challenge_reset', round2(feeUsd * 0.8), resetAt, 'approved');
      events.push({ at: resetAt, phase: 'phase_1' });
      start = resetAt;
      resets += 1;
    }
  }

  if (fundedAt !== undefined) {
    const monthly = rng.chance(0.5);
    const cycle = (monthly ? 30 : 14) * DAY_SECONDS * 1_000_000;
    for (let at = fundedAt + cycle + seconds(rng, 0, DAY_SECONDS); at < ctx.endMicros; at += cycle) {
      add('payout', monthly ? 'monthly_payout' : 'profit_split', round2(accountSize * rng.float(0.005, 0.04)), at,
        rng.weighted<Status>([['approved', 80], ['pending', 15], ['declined', 5]]), 12);
    }
  }
  if (fee?.status === 'approved' && rng.chance(0.03)) {
    add('refund', 'cancellation', feeUsd, feeAt + seconds(rng, 3600, 14 * DAY_SECONDS), 'approved', undefined, `refund of ${String(fee.transaction_id)}`);
  }
  if (rng.chance(0.03)) {
    const credit = rng.chance(0.6);
    add('adjustment', credit ? 'promotional_credit' : 'correction', credit ? round2(feeUsd * 0.1) : -round2(rng.float(1, 20)),
      randomMicros(rng, signup, ctx.endMicros), 'approved');
  }

  // The phase at the end of the range, and when the record last changed.
  const lastEvent = events.filter((e) => e.at < ctx.endMicros).at(-1) ?? { at: signup, phase: 'phase_1' as Phase };
  let modified = Math.max(signup + seconds(rng, 0.05, 2), lastEvent.at);
  const kyc = fundedAt !== undefined && fundedAt < ctx.endMicros ? 'approved' : rng.weighted<string>([['pending', 60], ['approved', 35], ['rejected', 5]]);
  if (kyc !== 'pending' && modified < ctx.endMicros - 1) modified = Math.max(modified, randomMicros(rng, modified, ctx.endMicros));
  const customer: SpecRecord = {
    customer_id: customerId,
    signup_date: stamp(rng, signup),
    affiliate_id: profile.affiliate_id,
    last_modified_date: stamp(rng, Math.min(modified, ctx.endMicros - 1)),
    ...profile,
    kyc_status_id: kyc,
    challenge_type: challengeType,
    phase: lastEvent.phase,
    account_size: accountSize,
  };
  if (rng.chance(0.5)) customer.sales_status_id = rng.pick(['lead', 'trial', 'customer', 'repeat_buyer']);

  return { customer, transactions, activity: tradingActivity(rng, ctx, customerId, accountSize, periods) };
}

function tradingActivity(rng: Random, ctx: GenerationContext, customerId: string, accountSize: number, periods: readonly TradingPeriod[]): SpecRecord[] {
  const rows: SpecRecord[] = [];
  const favourites = rng.sample(INSTRUMENTS, rng.int(1, 4)).sort();
  const lotScale = accountSize / 25_000;
  const seen = new Set<string>();
  for (const period of periods) {
    let equity = 0;
    let peak = 0;
    let maxDrawdown = 0;
    const lastDay = Math.min(dayOfMicros(period.end - 1), ctx.toDay);
    for (let day = dayOfMicros(period.start); day <= lastDay; day++) {
      const weekend = weekday(day) === 0 || weekday(day) === 6;
      if (!rng.chance(weekend ? 0.3 : 0.7)) continue;
      const instruments = favourites.filter((i) => (!weekend || CRYPTO.has(i)) && rng.chance(0.75));
      for (const instrument of instruments) {
        // A phase change mid-day starts a new period on the same day: one row per key and day.
        const key = `${day}|${instrument}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const pnl = round2(rng.gauss() * accountSize * 0.004 + accountSize * 0.0003);
        const low = Math.min(0, pnl) - rng.float(0, accountSize * 0.005);
        equity += pnl;
        peak = Math.max(peak, equity);
        maxDrawdown = Math.max(maxDrawdown, ((peak - equity - low * 0.5) / accountSize) * 100);
        rows.push({
          date: formatDay(day),
          customer_id: customerId,
          instrument,
          lots_traded: round2(Math.max(0.01, rng.float(0.01, 5) * lotScale)),
          pnl,
          currency: 'USD',
          drawdown: round2((-low / (accountSize + Math.max(equity, -accountSize / 2))) * 100),
          max_drawdown: round2(maxDrawdown),
        });
      }
    }
  }
  return rows;
}
