/**
 * Records shifting between pages during a page-number or offset walk. Such a walk reads
 * "positions 50..99 of the list as it is NOW": when the partner inserts, deletes or re-orders
 * (a modified record moves to the end of an `updated_at` ordering) records before the page being
 * read, every later record moves by one, and a record can slide onto a page already read. It is
 * then missed in this window while the stream's start moves past its (old) stamp: lost for good.
 *
 * A walk is watched for the two signs of a shift, and only those (a walk that shows neither costs
 * no extra request):
 * - `meta.total` (spec §2.5) differs from the walk's first page on a later page, the closing empty
 *   page included: records were added or removed mid-walk;
 * - a record comes back within the walk: its key (customer_id, transaction_id, through the
 *   stream's mapping) seen before with another version (its cursor field, as the store's version
 *   rule reads it) means it moved after being changed; an unchanged repeat (the last of page N
 *   first again on page N+1) means records moved forward.
 *   When the partner sends `meta.total` and it did not change, an identical repeat is not taken as
 *   a shift: nothing was added or removed, and the record that moved forward to cause it has a
 *   newer stamp that the next window reads.
 * Keyset (cursor) pagination is not affected and not watched: its next page starts after a
 * position, not at a count.
 */
import { createHash } from 'node:crypto';
import type { RestStream } from '../../src/config/definition.js';
import { hasChangeColumn } from '../../src/config/build-definition.js';
import type { Entity } from '../../src/types.js';

/** Spec §2.5: the list envelope's total number of records. */
export const DEFAULT_TOTAL_PATH = 'meta.total';
/** Walks of one window (the first and its re-walks) before it is given up as unstable. */
export const MAX_WALKS = 3;
/**
 * Records per walk whose keys and versions are remembered (about 100 bytes each; a whole activity
 * record where it has no key). Past it, a repeat is still caught at page boundaries, `meta.total`
 * everywhere, and a re-walk hands over again what it cannot tell was handed over (an upsert).
 */
export const MAX_TRACKED_RECORDS = 500_000;

/** The source key of a record, as text, or undefined when it has none. */
export type RecordKey = (record: unknown) => string | undefined;

const KEY_FIELD: Partial<Record<Entity, string>> = { customers: 'customer_id', transactions: 'transaction_id' };

/** How to read the key of the stream's source records (through its mapping), or undefined (activity: content only). */
export function recordKeyOf(stream: RestStream, valueAt: (value: unknown, path: string) => unknown): RecordKey | undefined {
  const field = KEY_FIELD[stream.entity];
  if (field === undefined) return undefined;
  const rule = stream.mapping.fields[field];
  const path = typeof rule === 'string' ? rule : rule !== undefined ? rule.from : stream.mapping.passthrough ? field : undefined;
  if (path === undefined || path === '') return undefined;
  return (record) => {
    const value = valueAt(record, path);
    return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)) ? String(value) : undefined;
  };
}

/**
 * A record as the walk tells records apart: its key, and its version (the stream's cursor field,
 * `last_modified_date` or `updated_at`; the whole record where there is none, as for transactions
 * read by `transaction_date`). A record without a
 * key (activity) is its whole content, with no version: it can only come back unchanged.
 */
export interface Identity {
  key: string;
  version: string;
}

/** How to identify the stream's source records (through its mapping and cursor field). */
export function identifyFor(stream: RestStream, valueAt: (value: unknown, path: string) => unknown): (record: unknown) => Identity {
  const key = recordKeyOf(stream, valueAt);
  // As the store's version rule: a transaction_date cursor is no version (a status change keeps it).
  const incremental = stream.incremental;
  const versionPath = incremental.mode === 'cursor' && (stream.entity !== 'transactions' || hasChangeColumn(incremental.cursor_field, stream.mapping)) ? incremental.cursor_field : undefined;
  return (record) => {
    const keyText = key?.(record);
    if (keyText === undefined) return { key: `\u0000${JSON.stringify(record) ?? ''}`, version: '' };
    const version = versionPath === undefined ? undefined : valueAt(record, versionPath);
    return { key: keyText, version: typeof version === 'string' || typeof version === 'number' ? String(version) : JSON.stringify(record) ?? '' };
  };
}

/** What one walk saw, page after page. */
export class WalkWatch {
  private firstTotal: number | undefined;
  private sawPage = false;
  private totalChange: string | undefined;
  private repeat: { text: string; changed: boolean } | undefined;
  /** key → version of the walk's records (up to MAX_TRACKED_RECORDS); the records it handed over. */
  readonly seen = new Map<string, string>();
  private previousPage = new Map<string, string>();
  private readonly digest = createHash('sha256');

  constructor(private readonly identify: (record: unknown) => Identity, private readonly totalAt: (body: unknown) => unknown) {}

  /**
   * Notes a page: its body, its records and its fingerprint (the same records give the same one).
   * Returns the identity of each record.
   */
  page(body: unknown, records: readonly unknown[], fingerprint: string, label: string): Identity[] {
    const total = this.totalAt(body);
    const asNumber = typeof total === 'number' && Number.isInteger(total) ? total : undefined;
    if (!this.sawPage) {
      this.sawPage = true;
      this.firstTotal = asNumber;
    } else if (this.totalChange === undefined && asNumber !== this.firstTotal) {
      this.totalChange = `meta.total went from ${String(this.firstTotal)} to ${String(asNumber)} (${label})`;
    }
    const identities: Identity[] = [];
    const tracking = this.seen.size < MAX_TRACKED_RECORDS;
    const page = new Map<string, string>();
    for (const record of records) {
      const id = this.identify(record);
      identities.push(id);
      const before = this.seen.get(id.key) ?? (tracking ? undefined : this.previousPage.get(id.key) ?? page.get(id.key));
      if (before !== undefined && (this.repeat === undefined || (!this.repeat.changed && before !== id.version))) {
        const who = id.key.startsWith('\u0000') ? 'a record' : `record ${JSON.stringify(id.key.length > 60 ? `${id.key.slice(0, 59)}…` : id.key)}`;
        this.repeat = { text: `${who} came back ${before === id.version ? 'unchanged' : 'changed'} (${label})`, changed: before !== id.version };
      }
      // Past the cap, only the page boundaries are watched.
      if (this.seen.size < MAX_TRACKED_RECORDS) this.seen.set(id.key, id.version);
      else page.set(id.key, id.version);
    }
    this.previousPage = page;
    this.digest.update(`${fingerprint};`);
    return identities;
  }

  /** The page count changed under the walk (records added or removed). */
  get totalChanged(): boolean {
    return this.totalChange !== undefined;
  }

  /** Why the walk cannot be trusted, or undefined when it can. */
  shift(): string | undefined {
    if (this.totalChange !== undefined) return this.totalChange;
    if (this.repeat === undefined) return undefined;
    // An unchanged repeat while meta.total held still: records moved forward, none was skipped.
    if (!this.repeat.changed && this.firstTotal !== undefined) return undefined;
    return this.repeat.text;
  }

  /** The walk's records in order; a re-walk that returns the same is a stable answer. */
  fingerprint(): string {
    return this.digest.copy().digest('base64');
  }
}
