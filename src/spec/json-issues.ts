/**
 * What the JSON text of a record hid from its parsed value (src/kernel/strict-json.ts), as the
 * record's violations, so that such a record is a reject like any other (field and rule named, the
 * rest of the batch loads) wherever it came from:
 *
 * - rule `duplicateKey`: a field given twice in one object. JSON.parse keeps the last value; a
 *   repeated amount is ambiguous money, so neither is taken.
 * - rule `encoding`: a string holding bytes that are not UTF-8. A decoder reads U+FFFD in their
 *   place, so `id-\xff` and `id-\xfe` would be one customer. Its record's key is not read either.
 * - numbers judged as written: a number of more than 15 significant digits parses to another
 *   value (`1.0000000000000001` to 1), so the field's `maxSignificantDigits` and
 *   `maxDecimalPlaces` count the digits of the text, not of the parsed value.
 *
 * Spec records (files, push bodies) are checked by the validator with their schema's limits; a
 * pulled record is checked by the field mapping (src/pipeline/map-record.ts) for the source fields
 * it reads, under the spec's limit of 15 significant digits.
 */
import { issueField, jsonIssuesOf, type JsonIssue } from '../kernel/strict-json.js';
import type { Violation } from '../types.js';
import { writtenDecimalPlaces, writtenSignificantDigits } from './keywords.js';

/** The numeric limits of one field, from its schema. */
export interface NumberLimits {
  maxSignificantDigits?: number;
  maxDecimalPlaces?: number;
}

export const DUPLICATE_KEY_RULE = 'duplicateKey';
export const ENCODING_RULE = 'encoding';
/** The spec's limit of significant digits in every number (spec §8). */
export const SPEC_SIGNIFICANT_DIGITS = 15;

/**
 * The violations of one issue, reported on `field`; `where` names the value when it is not the
 * field itself (a nested path, or the source field a mapped field was read from).
 */
export function issueViolations(issue: JsonIssue, field: string, limits: NumberLimits | undefined, where?: string): Violation[] {
  const at = where === undefined ? `${field}` : `${field}: ${where}`;
  switch (issue.rule) {
    case 'duplicate_key':
      return [{ field, rule: DUPLICATE_KEY_RULE, message: `${at}: given more than once in one object; send each field once (which value is meant is unknown)`, inText: true }];
    case 'encoding':
      return [{ field, rule: ENCODING_RULE, message: `${at}: not valid UTF-8 (bytes that are no character); send the text as UTF-8`, inText: true }];
    case 'exact_number': {
      const written = issue.written ?? '';
      const out: Violation[] = [];
      const digits = writtenSignificantDigits(written);
      const digitLimit = limits?.maxSignificantDigits ?? SPEC_SIGNIFICANT_DIGITS;
      if (digits > digitLimit) out.push({ field, rule: 'maxSignificantDigits', message: `${at}: more than ${digitLimit} significant digits as written (${written})`, inText: true });
      const places = limits?.maxDecimalPlaces;
      if (places !== undefined && writtenDecimalPlaces(written) > places) {
        out.push({ field, rule: 'maxDecimalPlaces', message: `${at}: more than ${places} decimal places as written (${written})`, inText: true });
      }
      // Past the limits of the doubles themselves (a subnormal): no rule of the spec says more.
      if (out.length === 0) out.push({ field, rule: 'maxSignificantDigits', message: `${at}: the number ${written} cannot be kept exactly`, inText: true });
      return out;
    }
  }
}

/**
 * Merges the JSON issues of a spec record into its schema violations: an issue's violation takes
 * the place of the schema's of the same field and rule (the schema judged the parsed value).
 * A field the schema found of the wrong type or unknown keeps only that violation.
 */
export function withJsonIssues(record: unknown, violations: readonly Violation[], limitsOf: (field: string) => NumberLimits | undefined): Violation[] {
  const issues = jsonIssuesOf(record);
  if (issues === undefined || issues.length === 0 || Array.isArray(record)) return violations as Violation[];
  const fromIssues: Violation[] = [];
  const typeless = new Set(violations.filter((v) => v.rule === 'type' || v.rule === 'additionalProperties').map((v) => v.field));
  for (const issue of issues) {
    const field = issue.path.length === 0 ? '(record)' : String(issue.path[0]);
    if (issue.rule === 'exact_number' && typeless.has(field)) continue;
    const where = issue.path.length > 1 ? issueField(issue.path) : undefined;
    for (const v of issueViolations(issue, field, limitsOf(field), where)) {
      if (!fromIssues.some((u) => u.field === v.field && u.rule === v.rule)) fromIssues.push(v);
    }
  }
  const replaced = new Set(fromIssues.map((v) => `${v.field}\u0000${v.rule}`));
  return [...violations.filter((v) => !replaced.has(`${v.field}\u0000${v.rule}`)), ...fromIssues];
}
