/**
 * Booking an evaluation's targets: the lines their keys need appended to the ledger, the postbacks
 * of what those lines mean, and the keys' FX and review holds replaced, in the caller's
 * transaction. What every face of the engine books with (evaluations, recompute --repair).
 */
import type { Knex } from 'knex';
import { sum, type Money } from '../kernel/money.js';
import { append } from '../kernel/collections.js';
import { writeCpaEvents } from '../postbacks/commission-facts.js';
import { completeTargets } from './customer-targets.js';
import { appendLines, linesFor, replaceHolds, type NewLine } from './ledger.js';
import { replaceReviewHolds } from './review-holds.js';
import { firstBookingReason } from './rules/revshare.js';
import type { LineState, Target } from './target.js';

export interface Evaluation {
  partner: string;
  /** Keys whose targets were computed. */
  keys: number;
  /** Lines appended, and their sum. */
  lines: number;
  net: Money;
  /** Entries held now (waiting for FX rates), and holds released by this run. */
  held: number;
  /** The rates those entries wait for (currency and day), each once, sorted. */
  missingRates: string[];
  released: number;
  /** Entries held for review (a fraud flag open), and review holds released by this run. */
  reviewHeld: number;
  reviewReleased: number;
  /** Customer-days re-derived (written or removed). */
  days: number;
}

/** Appends the lines the targets need and replaces the evaluated keys' holds. */
export async function book(
  trx: Knex.Transaction,
  targets: readonly Target[],
  lines: ReadonlyMap<string, LineState[]>,
  currentMonth: string,
  runId: string,
  now: string,
): Promise<Pick<Evaluation, 'keys' | 'lines' | 'net' | 'held' | 'missingRates' | 'released' | 'reviewHeld' | 'reviewReleased'>> {
  const byKey = new Map<string, Target[]>();
  for (const t of targets) append(byKey, t.key, t);
  const add: NewLine[] = [];
  const held: Target[] = [];
  for (const [key, list] of byKey) {
    const need = linesFor(completeTargets(list, lines.get(key), currentMonth).map((t) => firstBookingReason(t, lines.get(key))), lines.get(key));
    add.push(...need.add);
    held.push(...need.held);
  }
  await appendLines(trx, add, runId, now);
  // The postbacks of what these lines mean (a CPA qualified or clawed back), in the same transaction.
  await writeCpaEvents(trx, add, lines, now);
  // A key held only for review is no FX hold; one missing rates too is both.
  const fxHeld = held.filter((t) => t.review === undefined || t.missing.length > 0);
  const released = await replaceHolds(trx, [...byKey.keys()], fxHeld, now);
  const review = await replaceReviewHolds(trx, [...byKey.keys()], targets, now);
  const missingRates = [...new Set(fxHeld.flatMap((t) => t.missing))].sort();
  return { keys: byKey.size, lines: add.length, net: sum(add.map((l) => l.amount)), held: fxHeld.length, missingRates, released, reviewHeld: review.held, reviewReleased: review.released };
}
