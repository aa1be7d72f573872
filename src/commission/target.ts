/**
 * The shapes the commission rules, the ledger and the review holds share: a key's target, a
 * ledger line as the rules read it back, and a review hold's mark. Their own module, below all
 * three, so that none of them imports another for its types.
 */
import { sum, type Money } from '../kernel/money.js';
import type { MissingRate } from '../kernel/fx.js';
import type { Plan } from './plans.js';

/** What a rule says a key should total for one affiliate, or that it cannot say yet (held). */
export interface Target {
  key: string;
  plan: Plan;
  affiliate: string;
  customer: string | null;
  /** Cents; null while held. */
  amount: Money | null;
  /** The rates a held target waits for. */
  missing: MissingRate[];
  /** Why the key stands at this amount: names the line that moves it there. */
  reason: string;
  /** YYYY-MM the line belongs to. */
  period: string;
  refId: string | null;
  /** The records behind the amount: `transactions:t1`, `customers:c1`, `activity:c1@2026-11-02`. */
  sources: string[];
  basis: Record<string, unknown>;
  /** Set while a fraud flag of the customer is open (src/commission/review-holds.ts): a review hold, not an FX hold. */
  review?: ReviewMark;
}

/** A ledger line as the rules read it back. */
export interface LineState {
  id: number;
  affiliate: string;
  amount: Money;
  reason: string;
  refId: string | null;
  period: string;
  createdAt: string;
}

export function keyTotal(lines: readonly LineState[] | undefined): Money {
  return sum((lines ?? []).map((l) => l.amount));
}

export interface FlagRef {
  id: number;
  rule: string;
}

/** What a review hold says about one key and affiliate. */
export interface ReviewMark {
  flags: FlagRef[];
  /** Booked in the ledger and withheld from payout. */
  withheld: Money;
  /** Not booked while the flag is open (a per-customer target; a RevShare month's share held apart); null while FX rates are missing too. */
  waiting: Money | null;
}
