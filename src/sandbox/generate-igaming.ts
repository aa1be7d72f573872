/**
 * Generated iGaming data: a player, their money movements (deposits, withdrawals, bonuses,
 * adjustments) and their gaming activity per day and game type from the first approved deposit on.
 */
import type { SpecRecord } from '../types.js';
import {
  customerProfile,
  dayOfMicros,
  nextBatchRun,
  pickCountry,
  randomMicros,
  roundAmount,
  seconds,
  settle,
  stamp,
  toUsd,
  type Status,
  type GeneratedCustomer,
  type GenerationContext,
} from './generate-common.js';
import { formatDay, parseDay } from './instant.js';
import { createRandom, deriveSeed, type Random } from './prng.js';

const DAY_SECONDS = 86_400;

/** Local amounts scale with the currency, so a SEK player deposits 500, not 50. */
const LOCAL_SCALE: Readonly<Record<string, number>> = { SEK: 10, NOK: 10, BRL: 5, MXN: 20, JPY: 150 };
const DEPOSIT_SIZES = [10, 20, 25, 50, 50, 100, 100, 150, 200, 250, 500, 1000];
const PAYMENT_METHODS = ['card', 'card', 'card', 'wire', 'crypto', 'e_wallet'];

interface GameProfile {
  bets: readonly [number, number];
  stake: readonly [number, number];
  /** Spread of the day's payout ratio around 0.88: sportsbook days swing more than slots. */
  spread: number;
}

const GAMES: Readonly<Record<string, GameProfile>> = {
  slots: { bets: [20, 600], stake: [0.2, 5], spread: 0.3 },
  live_casino: { bets: [5, 120], stake: [2, 50], spread: 0.35 },
  table_games: { bets: [5, 150], stake: [1, 25], spread: 0.3 },
  sportsbook: { bets: [1, 15], stake: [5, 100], spread: 0.6 },
  poker: { bets: [10, 200], stake: [0.5, 10], spread: 0.4 },
};
const GAME_TYPES = Object.keys(GAMES);

export function igamingCustomerId(index: number): string {
  return `igc-${String(index + 1).padStart(6, '0')}`;
}

export function generateIgamingCustomer(ctx: GenerationContext, index: number): GeneratedCustomer {
  const rng = createRandom(deriveSeed(ctx.seed, 'igaming', index));
  const customerId = igamingCustomerId(index);
  const country = pickCountry(rng);
  const currency = country.currency;
  const scale = LOCAL_SCALE[currency] ?? 1;
  const signup = randomMicros(rng, ctx.startMicros, ctx.endMicros);
  const profile = customerProfile(rng, index + 1, country);

  // The record is written just after signup; a KYC decision (often by the nightly 03:00 batch,
  // which gives several customers the same last_modified_date) modifies it again.
  let modified = signup + seconds(rng, 0.05, 2);
  let kyc = rng.weighted<string>([['approved', 60], ['pending', 30], ['rejected', 10]]);
  if (kyc !== 'pending') {
    const reviewed = rng.chance(0.4) ? nextBatchRun(signup, 3) : signup + seconds(rng, 600, 3 * DAY_SECONDS);
    if (reviewed < ctx.endMicros) modified = reviewed;
    else kyc = 'pending';
  }
  modified = Math.min(modified, ctx.endMicros - 1);
  const customer: SpecRecord = {
    customer_id: customerId,
    signup_date: stamp(rng, signup),
    affiliate_id: profile.affiliate_id,
    last_modified_date: stamp(rng, modified),
    ...profile,
    kyc_status_id: kyc,
  };
  if (rng.chance(0.7)) customer.sales_status_id = rng.pick(['new', 'contacted', 'active', 'vip', 'dormant']);

  const transactions: SpecRecord[] = [];
  // A transaction after the range has not happened yet.
  const add = (type: string, subtype: string | undefined, amount: number, at: number, status: Status, note?: string): SpecRecord | undefined => {
    if (at >= ctx.endMicros) return undefined;
    const date = stamp(rng, at);
    const settled = settle(rng, ctx, at, status, type === 'withdrawal' ? 2 : undefined);
    const tx: SpecRecord = {
      transaction_id: `igt-${String(index + 1).padStart(6, '0')}-${String(transactions.length + 1).padStart(3, '0')}`,
      customer_id: customerId,
      transaction_type: type,
      amount_currency: amount,
      currency,
      transaction_date: date,
      status: settled.status,
    };
    if (rng.chance(0.9)) tx.amount_usd = toUsd(amount, currency);
    if (subtype !== undefined) tx.transaction_subtype = subtype;
    if (note !== undefined) tx.note = note;
    // Unchanged since it was written: the same text, so updated_at is never before transaction_date.
    tx.updated_at = settled.at === at ? date : stamp(rng, settled.at);
    transactions.push(tx);
    return tx;
  };
  const depositAmount = () => {
    const base = rng.pick(DEPOSIT_SIZES) * scale;
    return roundAmount(rng.chance(0.1) ? base - 0.01 : base, currency);
  };

  let firstApproved: number | undefined;
  const approvedDeposits: SpecRecord[] = [];
  /** Approved deposits (local amount) by time: a withdrawal is sized by what was deposited before it. */
  const depositsAt: { at: number; amount: number }[] = [];
  if (rng.chance(0.75)) {
    let at = signup + seconds(rng, 120, 2 * DAY_SECONDS);
    let count = 0;
    const wanted = 1 + rng.int(0, 8);
    while (at < ctx.endMicros && count < wanted) {
      const status = count === 0
        ? rng.weighted<Status>([['approved', 85], ['declined', 10], ['pending', 5]])
        : rng.weighted<Status>([['approved', 85], ['declined', 8], ['pending', 4], ['reversed', 3]]);
      const method = rng.pick(PAYMENT_METHODS);
      const amount = depositAmount();
      const note = method === 'crypto' ? `chain tx 0x${rng.int(0, 0xffffffff).toString(16).padStart(8, '0')}` : undefined;
      const tx = add('deposit', method, amount, at, status, note);
      if (tx?.status === 'approved') {
        depositsAt.push({ at, amount });
        approvedDeposits.push(tx);
        if (firstApproved === undefined) {
          firstApproved = at;
          if (rng.chance(0.5)) add('bonus', 'welcome_bonus', roundAmount(Math.min(amount, 100 * scale), currency), at + seconds(rng, 1, 30), 'approved');
        } else if (rng.chance(0.2)) {
          add('bonus', rng.pick(['reload_bonus', 'free_spins', 'cashback']), roundAmount(amount * 0.25, currency), at + seconds(rng, 1, 60), 'approved');
        }
      }
      count += 1;
      // A declined card is often retried within the hour.
      at += tx?.status === 'declined' && rng.chance(0.6) ? seconds(rng, 60, 3600) : seconds(rng, 3600, 5 * DAY_SECONDS);
    }
  }

  const withdrawals: { at: number; tx: SpecRecord }[] = [];
  if (firstApproved !== undefined) {
    const count = rng.int(0, 3);
    for (let i = 0; i < count; i++) {
      const at = randomMicros(rng, firstApproved, ctx.endMicros);
      // Asked for by the deposits made before it (not by later ones: money not yet deposited cannot
      // be withdrawn), 20% to 120% of them; what the balance holds caps it once play is known.
      const depositedBefore = depositsAt.filter((d) => d.at < at).reduce((sum, d) => sum + d.amount, 0);
      const amount = roundAmount(Math.max(10 * scale, depositedBefore * rng.float(0.2, 1.2)), currency);
      const tx = add('withdrawal', rng.pick(['wire', 'card', 'crypto', 'e_wallet']), amount, at, rng.weighted<Status>([['approved', 70], ['pending', 20], ['declined', 10]]));
      if (tx !== undefined) withdrawals.push({ at, tx });
    }
    const chargedBack = approvedDeposits[0];
    if (chargedBack !== undefined && rng.chance(0.06)) {
      const at = randomMicros(rng, firstApproved, ctx.endMicros);
      add('adjustment', 'chargeback', -Number(chargedBack.amount_currency), at, 'approved', `chargeback of ${String(chargedBack.transaction_id)}`);
    }
    if (rng.chance(0.04)) {
      add('adjustment', 'manual_correction', roundAmount(rng.float(1, 50) * scale, currency), randomMicros(rng, firstApproved, ctx.endMicros), 'approved', 'goodwill credit');
    }
    if (rng.chance(0.02)) {
      add('other', 'loyalty_points_conversion', roundAmount(rng.float(1, 20) * scale, currency), randomMicros(rng, firstApproved, ctx.endMicros), 'approved');
    }
  }

  const depositDays = new Set(depositsAt.map((d) => dayOfMicros(d.at)));
  const activity = firstApproved === undefined ? [] : gamingActivity(rng, ctx, customerId, currency, scale, dayOfMicros(firstApproved), depositDays);
  withdrawFromBalance(withdrawals, depositsAt, activity, currency, scale);
  return { customer, transactions, activity };
}

/**
 * Money follows the balance, as on a real platform: a withdrawal takes out at most what the player
 * deposited before it, plus what they won and minus what they lost on the days before it (and the
 * day's play when it lost), minus what they asked to withdraw before. Bonus money is never
 * withdrawable (taken out before its wagering requirement, it is forfeited). A request the balance
 * cannot cover (under the platform's minimum) is declined for insufficient funds.
 */
function withdrawFromBalance(withdrawals: readonly { at: number; tx: SpecRecord }[], depositsAt: readonly { at: number; amount: number }[], activity: readonly SpecRecord[], currency: string, scale: number): void {
  const netByDay = new Map<number, number>();
  for (const row of activity) {
    const day = parseDay(String(row.date));
    if (day === undefined) continue;
    netByDay.set(day, (netByDay.get(day) ?? 0) + Number(row.wins) - Number(row.total_bets));
  }
  let asked = 0;
  for (const { at, tx } of [...withdrawals].sort((a, b) => a.at - b.at)) {
    if (tx.status === 'declined') continue;
    const day = dayOfMicros(at);
    let balance = depositsAt.filter((d) => d.at < at).reduce((sum, d) => sum + d.amount, 0) - asked;
    for (const [played, net] of netByDay) if (played < day || (played === day && net < 0)) balance += net;
    const amount = Number(tx.amount_currency);
    if (balance < 10 * scale) {
      tx.status = 'declined';
      continue;
    }
    if (amount > balance) {
      const capped = roundAmount(Math.floor(balance), currency);
      tx.amount_currency = capped;
      if (tx.amount_usd !== undefined) tx.amount_usd = toUsd(capped, currency);
    }
    asked += Number(tx.amount_currency);
  }
}

/** Play from the first deposit's day on: on every day the player deposited (money is deposited to play), and on other days at the player's rate. */
function gamingActivity(rng: Random, ctx: GenerationContext, customerId: string, currency: string, scale: number, firstDay: number, depositDays: ReadonlySet<number>): SpecRecord[] {
  const rows: SpecRecord[] = [];
  const activeRate = rng.float(0.15, 0.8);
  const favourites = rng.sample(GAME_TYPES, rng.int(1, 3)).sort();
  for (let day = firstDay; day <= ctx.toDay; day++) {
    if (day !== firstDay && !depositDays.has(day) && !rng.chance(activeRate)) continue;
    let games = favourites.filter(() => rng.chance(0.7));
    if (games.length === 0) games = favourites.slice(0, 1);
    for (const gameType of games) {
      const game = GAMES[gameType] as GameProfile;
      const betsCount = rng.int(game.bets[0], game.bets[1]);
      const totalBets = roundAmount(betsCount * rng.float(game.stake[0], game.stake[1]) * scale, currency);
      // Payout ratio around 0.88; above 1 the player won more than wagered (negative GGR).
      const wins = roundAmount(totalBets * Math.max(0, 0.88 + rng.gauss() * game.spread), currency);
      const ggr = roundAmount(totalBets - wins, currency);
      const bonusCost = rng.chance(0.15) ? roundAmount(totalBets * rng.float(0, 0.2), currency) : 0;
      const tax = ggr > 0 ? roundAmount(ggr * 0.05, currency) : 0;
      rows.push({
        date: formatDay(day),
        customer_id: customerId,
        game_type: gameType,
        currency,
        bets_count: betsCount,
        total_bets: totalBets,
        wins,
        ggr,
        ngr: roundAmount(ggr - bonusCost - tax, currency),
      });
    }
  }
  return rows;
}
