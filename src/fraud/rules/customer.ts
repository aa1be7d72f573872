/**
 * The rules of one customer's own transactions and wagering (docs/fraud.md): bonus_bust_out,
 * deposit_cycling, and fast_funding (a prop-trading account funded fast and linked to another).
 */
import { addDays } from '../../kernel/dates.js';
import { money, type Money } from '../../kernel/money.js';
import { approved, judgeWagering, type CustomerData, type Tx } from '../facts.js';
import type { Finding } from '../flags.js';
import { finding, key, usd, type Ctx } from './unit.js';

/** Approved deposits minus approved withdrawals before `at` (USD); undefined when one lacks a rate. */
function netDepositsBefore(txs: readonly Tx[], at: string): Money | undefined {
  let net = money(0);
  for (const t of txs) {
    if (t.at >= at) break;
    if (t.type !== 'deposit' && t.type !== 'withdrawal') continue;
    if (t.usd === undefined) return undefined;
    net = t.type === 'deposit' ? net.plus(t.usd) : net.minus(t.usd);
  }
  return net;
}

/** The customer's net winnings (USD) over the days [from, to], when positive; days without known wins count 0 (they explain nothing). */
function netWinnings(data: CustomerData, from: string, to: string): Money {
  let total = money(0);
  for (const [d, won] of data.winnings ?? []) if (d >= from && d <= to && won !== undefined) total = total.plus(won);
  return total.greaterThan(0) ? total : money(0);
}

/**
 * bonus_bust_out: per approved bonus, the first approved withdrawal within N days after it that
 * takes out more than the customer's net deposits before it and the net winnings of the days
 * between by at least min_bonus_out × the bonus (the bonus money leaves), with wagering
 * from the bonus's day to the withdrawal's day below multiple × bonus.
 */
export function bonusBustOut(ctx: Ctx, data: CustomerData): Finding[] {
  const s = ctx.settings.bonus_bust_out;
  const out: Finding[] = [];
  const txs = data.txs.filter(approved);
  for (const bonus of txs) {
    if (bonus.type !== 'bonus' || bonus.usd === undefined || !bonus.usd.greaterThan(0)) continue;
    const limitAt = Date.parse(bonus.at) + s.within_days * 86_400_000;
    const withdrawal = txs.find((t) => t.type === 'withdrawal' && t.at > bonus.at && Date.parse(t.at) <= limitAt);
    if (!withdrawal || withdrawal.usd === undefined) continue;
    const net = netDepositsBefore(txs, withdrawal.at);
    if (net === undefined) continue;
    // What the player won net over the days explains that much of the excess: a lucky day, not the bonus.
    const won = netWinnings(data, bonus.day, withdrawal.day);
    const bonusOut = withdrawal.usd.minus(net).minus(won);
    if (bonusOut.lessThan(bonus.usd.times(s.min_bonus_out)) || !bonusOut.greaterThan(0)) continue;
    const limit = bonus.usd.times(s.wagering_multiple);
    const j = judgeWagering(data, bonus.day, withdrawal.day, limit);
    if (j.verdict !== 'below') continue;
    out.push(finding(ctx, 'bonus_bust_out', key(data.row.customer_id, bonus.transaction_id), data.row.affiliate_id, 'medium', [data.row.customer_id], {
      customer_id: data.row.customer_id,
      bonus: { transaction_id: bonus.transaction_id, at: bonus.at, amount_usd: usd(bonus.usd) },
      withdrawal: { transaction_id: withdrawal.transaction_id, at: withdrawal.at, amount_usd: usd(withdrawal.usd) },
      net_deposits_usd: usd(net), ...(won.isZero() ? {} : { net_winnings_usd: usd(won) }), bonus_out_usd: usd(bonusOut), min_bonus_out: s.min_bonus_out, wagering_usd: usd(j.wagered), wagering_limit_usd: usd(limit), within_days: s.within_days,
    }));
  }
  return out;
}

/**
 * deposit_cycling: withdrawals paired with the latest unpaired deposit at most N days before; a
 * cycle returns ≥ ratio of it with wagering below multiple × deposit, and weighs how little was
 * played: 1 − wagering ÷ (multiple × deposit). Flagged at min_cycles cycles, or at fewer whose
 * weights add up to min_weight (two round trips with 2% play weigh 1.92).
 */
export function depositCycling(ctx: Ctx, data: CustomerData): Finding[] {
  const s = ctx.settings.deposit_cycling;
  const open: typeof data.txs = [];
  const cycles: Record<string, unknown>[] = [];
  let total = money(0);
  for (const t of data.txs.filter(approved)) {
    if (t.type === 'deposit') { open.push(t); continue; }
    if (t.type !== 'withdrawal') continue;
    const deposit = open[open.length - 1];
    if (!deposit || addDays(deposit.day, s.within_days) < t.day) continue;
    open.pop();
    if (deposit.usd === undefined || t.usd === undefined || !deposit.usd.greaterThan(0)) continue;
    if (t.usd.lessThan(deposit.usd.times(s.min_return_ratio))) continue;
    const j = judgeWagering(data, deposit.day, t.day, deposit.usd.times(s.wagering_multiple));
    if (j.verdict !== 'below') continue;
    const limit = deposit.usd.times(s.wagering_multiple);
    const weight = limit.isZero() ? money(1) : money(1).minus(j.wagered.dividedBy(limit));
    total = total.plus(weight);
    cycles.push({ deposit: { transaction_id: deposit.transaction_id, at: deposit.at, amount_usd: usd(deposit.usd) }, withdrawal: { transaction_id: t.transaction_id, at: t.at, amount_usd: usd(t.usd) }, wagering_usd: usd(j.wagered), weight: weight.toDecimalPlaces(4).toFixed(4) });
  }
  if (cycles.length === 0 || (cycles.length < s.min_cycles && total.lessThan(s.min_weight))) return [];
  const high = cycles.length >= 2 * s.min_cycles || total.greaterThanOrEqualTo(money(s.min_weight).times(2));
  return [finding(ctx, 'deposit_cycling', key(data.row.customer_id), data.row.affiliate_id, high ? 'high' : 'medium', [data.row.customer_id], {
    customer_id: data.row.customer_id, cycles: cycles.length, min_cycles: s.min_cycles, weight: total.toDecimalPlaces(4).toFixed(4), min_weight: s.min_weight, pairs: cycles,
  })];
}

/** fast_funding: funded less than max_days after signup, and linked (an identity key shared) to another account. */
export function fastFunding(ctx: Ctx, data: CustomerData, fundedDays: number | null, linked: readonly { customer_id: string; via: string }[]): Finding[] {
  const s = ctx.settings.fast_funding;
  // An instant-funding challenge is funded when bought: its speed says nothing.
  if ((data.row.challenge_type ?? '').toLowerCase() === 'instant_funding') return [];
  if (fundedDays === null || !(fundedDays < s.max_days) || linked.length === 0) return [];
  return [finding(ctx, 'fast_funding', key(data.row.customer_id), data.row.affiliate_id, 'high', [data.row.customer_id, ...linked.map((l) => l.customer_id)], {
    customer_id: data.row.customer_id, signup_date: data.row.signup_date, funded_record_at: data.row.last_modified_date,
    funded_days: fundedDays.toFixed(2), max_days: s.max_days, linked,
  })];
}
