/**
 * Core types of partner-sync.
 *
 * Glossary
 * - Partner: an iGaming operator or a prop-trading firm whose player/trader data we pull.
 * - Variant: `igaming` or `prop-trading`; decides which fields and transaction types are valid.
 * - Entity: one of the three record kinds of the spec, `customers`, `transactions`, `activity`.
 * - Stream: what a connector pulls for one entity of one partner; state is kept per (partner, stream).
 * - Watermark / cursor: how far a stream has been loaded; committed with the rows it covers.
 * - Reject: a record that failed the spec's validation, kept with its raw payload and reasons.
 * - Waiting record: a valid transaction or activity record whose customer is not (yet) in the
 *   store; it waits and loads when that customer arrives.
 * - FTD: first-time deposit, a customer's first approved deposit (triggers CPA).
 * - CPA: cost per acquisition, a fixed commission per qualifying customer.
 * - GGR: gross gaming revenue, total_bets minus wins. NGR: GGR minus bonuses, taxes, deductions.
 * - RevShare: a commission that is a percentage of GGR or NGR.
 * - Phase: a prop-trading account's stage, phase_1, phase_2, funded or failed.
 */

export const VARIANTS = ['igaming', 'prop-trading'] as const;
export type Variant = (typeof VARIANTS)[number];

export const ENTITIES = ['customers', 'transactions', 'activity'] as const;
export type Entity = (typeof ENTITIES)[number];

/** One violation of a spec rule by one record. `field` is the spec field name. */
export interface Violation {
  field: string;
  rule: string;
  message: string;
  /**
   * The violation was found in the record's JSON text, not in its value (a field given twice,
   * bytes that are not UTF-8, a number a double cannot keep): the reject's stored payload cannot
   * show it, so the record is never replayed from that payload.
   */
  inText?: true;
}

/** A record that passed validation: a plain JSON object with the spec's fields. */
export type SpecRecord = Record<string, unknown>;

export function isVariant(value: unknown): value is Variant {
  return typeof value === 'string' && (VARIANTS as readonly string[]).includes(value);
}

export function isEntity(value: unknown): value is Entity {
  return typeof value === 'string' && (ENTITIES as readonly string[]).includes(value);
}

/** A record as received from a source, before validation. `position` is 1-based within its file or page. */
export interface RawRecord {
  position: number;
  /** The parsed JSON value; for a line that is not JSON, its raw text. */
  value: unknown;
  /** Set when the input could not be parsed as JSON. */
  parseError?: string;
  /** The partner's record as pulled, when `value` is its mapping to spec fields (kept in rejects, re-mapped on replay). */
  source?: unknown;
  /** Set when the field mapping of `source` failed; the record is rejected with these. */
  mappingErrors?: Violation[];
  /**
   * The record's id (customer_id, transaction_id) when its source row says it was deleted at the
   * source (a stream's soft_delete column): the load path deletes the record instead of loading it.
   */
  deletedAtSource?: string;
  /**
   * The source's cursor value of the record (a change field such as `updated_at`), when it was
   * pulled by a cursor stream: its version, which the mapped record may not carry.
   */
  version?: string;
}

/** Validates one record against the spec's schema of its variant and entity; empty means valid. */
export interface RecordValidator {
  validate(variant: Variant, entity: Entity, record: unknown): Violation[];
}
