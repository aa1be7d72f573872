/**
 * What `discover` found, as data: per REST endpoint or per table, the fields, pagination, keys,
 * references and keyset candidates. Its own module, so that the REST and database discoverers,
 * which produce it, and `discover`, which picks between them, do not import each other.
 */
import type { Entity } from '../types.js';
import type { FieldProfile } from './profile.js';

/** How an endpoint pages, with the definition's names for its parameters (only those found). */
export interface PaginationSeen {
  type: 'cursor' | 'page' | 'offset' | 'none';
  /** Where the next cursor is in the body (cursor pagination). */
  cursor_path?: string;
  /** The query parameter that takes the next cursor. */
  cursor_param?: string;
  /** The page size's parameter (cursor and page pagination). */
  per_page_param?: string;
  page_param?: string;
  first_page?: number;
  offset_param?: string;
  /** The page size's parameter (offset pagination). */
  limit_param?: string;
  /** Which request showed it: the parameter that advanced. */
  evidence?: string;
  /** type none: what was tried without advancing. */
  tried?: string[];
}

/**
 * A column (or REST field) whose values point at another relation's key: declared by a foreign
 * key, or measured on the sample (every distinct value of the sample found in the key).
 */
export interface ReferenceSeen {
  column: string;
  /** The table (REST: the entity) whose key it points at, and that key. */
  table: string;
  key: string;
  how: 'declared' | 'contained';
  /** contained: the sample's distinct values, and how many of them the key holds (all, unless the key itself was only sampled). */
  values?: number;
  found?: number;
}

/** A list's date filter: the parameters whose bounds restrict it by date, as discover saw them answer. */
export interface DateFilterSeen {
  from_param: string;
  to_param?: string;
  /** How a bound is written: ISO 8601 text, a date, epoch seconds or milliseconds (the records' own stamps). */
  format: 'iso' | 'date' | 'epoch-seconds' | 'epoch-millis';
  /** Which requests showed it. */
  evidence: string;
}

/** One page of the history sample: what it is, how many records it held (and how many not read before), or why it failed. */
export interface HistorySampleSeen {
  label: string;
  records?: number;
  added?: number;
  error?: string;
}

/**
 * The pages of a list read beyond its first ones, spread over the partner's history, that code
 * maps are built from (discover-history.ts): the whole list when it was read to its end, else date
 * windows, else pages at positions spread over the list, else none.
 */
export interface HistorySeen {
  spread: 'whole' | 'windows' | 'positions' | 'none';
  /** Where the values were read, as the draft's comments say it. */
  where: string;
  samples: HistorySampleSeen[];
  filter?: DateFilterSeen;
  /** Why no value set of the list can be shown complete (a failed window, a list without a way to reach its older records). */
  incomplete?: string;
}

export interface EntityDiscovery {
  entity: Entity;
  /** The list path, without its query. */
  where: string;
  /** The query parameters given with the list path: sent on every page. */
  params?: Record<string, string>;
  records: number;
  pages: number;
  /** Where the records are in the body ('' for a bare array); undefined when none were found. */
  records_path: string | undefined;
  pagination: PaginationSeen;
  /** meta.total of the first page, when the partner gives it. */
  total?: number;
  fields: FieldProfile[];
  /** Customers and transactions: the pages read over the history beyond the first ones, that the fields' profile includes. */
  history?: HistorySeen;
  /** Fields whose sampled values are all values of the customers' key field. */
  references: ReferenceSeen[];
  notes: string[];
}

export interface IndexSeen {
  name: string;
  unique: boolean;
  columns: string[];
}

export interface KeysetCandidate {
  cursor_column: string;
  tiebreak_column: string;
  /** The index that starts with the cursor column. */
  index: string;
  /** The cursor column is named like a change column (updated_at, lastModified). */
  change_column: boolean;
  /** The index is exactly (cursor, tie-breaker): the keyset's pages read the index alone. */
  exact: boolean;
}

export interface TableDiscovery {
  name: string;
  kind: 'table' | 'view';
  rows: number;
  sampled: number;
  columns: { name: string; type: string; kind: string }[];
  /** The primary key's columns (none for a view). */
  primary_key: string[];
  /** Declared foreign keys and references measured on the sample. */
  references: ReferenceSeen[];
  indexes: IndexSeen[];
  keyset: KeysetCandidate[];
  date_columns: string[];
  fields: FieldProfile[];
  /**
   * Zone-less date-time columns (DATETIME, timestamp without time zone) and the newest value of
   * each that is cheap to read (an index starts with it, or it is named like a change column),
   * read as if UTC: the evidence for the source's `timezone`.
   */
  zoneless?: { column: string; newest?: string }[];
}

/** The source's own clock at discovery, in UTC, and the zone its server is set to (MySQL, MariaDB). */
export interface SourceClock {
  utc: string;
  server_zone?: string;
}

export type Discovery =
  | { kind: 'rest'; base_url: string; entities: EntityDiscovery[] }
  | { kind: 'db' | 'warehouse'; client: string; tables: TableDiscovery[]; clock?: SourceClock };

/** A reference and its evidence, as the report and the draft's comments say it. */
export function referenceText(r: ReferenceSeen): string {
  return r.how === 'declared'
    ? `${r.column} → ${r.table}.${r.key} (declared foreign key)`
    : `${r.column} → ${r.table}.${r.key} (${r.found === r.values ? 'all' : `${r.found} of`} ${r.values} distinct values of the sample found in ${r.table}.${r.key}${r.found === r.values ? '' : ', itself a sample'})`;
}
