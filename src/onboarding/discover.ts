/**
 * `discover`: what a partner's source holds, before any definition exists. REST: per list
 * endpoint the fields seen, their JSON types and formats, low-cardinality values, nulls, the
 * pagination style and total. Database or warehouse: per table or view its columns and types,
 * indexes usable as a keyset, row count, and the same value profile on a sample.
 */
import type { Logger } from '../log.js';
import { discoverDb } from './discover-db.js';
import { discoverRest } from './discover-rest.js';
import type { SourceOptions } from './source-options.js';
import { referenceText, type Discovery, type HistorySeen, type PaginationSeen } from './discovery.js';
import type { FieldProfile } from './profile.js';

export interface DiscoverDeps {
  clock: () => Date;
  logger: Logger;
  env: NodeJS.ProcessEnv;
  /** REST: pages read per endpoint (default 3); database: rows sampled per table (default 500). */
  pages?: number;
  sample?: number;
  /** REST activity: the day to sample, instead of looking back from yesterday for a day with rows. */
  sampleDate?: string;
  /** REST activity: how many days back from yesterday to look for a day with rows (default 90). */
  lookbackDays?: number;
}

export async function discover(options: SourceOptions, deps: DiscoverDeps): Promise<Discovery> {
  if (options.kind === 'rest') {
    const entities = await discoverRest(options, { pages: deps.pages ?? 3, perPage: 100, clock: deps.clock, logger: deps.logger, env: deps.env, activityDays: deps.lookbackDays ?? 90, sampleDate: deps.sampleDate });
    return { kind: 'rest', base_url: options.baseUrl, entities };
  }
  const { tables, clock } = await discoverDb(options, { sample: deps.sample ?? 500, logger: deps.logger, env: deps.env });
  return { kind: options.kind, client: options.client, tables, ...(clock ? { clock } : {}) };
}


function describeField(f: FieldProfile): string {
  const parts = [`${f.name}: ${f.types.join('|')}`];
  if (f.format !== undefined && f.format !== 'text') parts.push(`format ${f.format}`);
  if (f.minor_units) parts.push(`minor units? (${f.minor_units.reason})`);
  if (f.unique) parts.push('unique in the sample');
  if (f.nulls > 0) parts.push(`${f.nulls} null`);
  if (f.absent > 0) parts.push(`${f.absent} absent`);
  if (f.distinct) parts.push(`values ${f.distinct.map((v) => JSON.stringify(v)).join(', ')}${f.distinct_from === 'history' ? ' (complete: read over the history)' : f.distinct_from === 'sample' ? ' (a sample: maybe not all)' : ''}`);
  else if (f.min !== undefined) parts.push(`${f.min} .. ${f.max}`);
  else if (f.examples.length > 0) parts.push(`e.g. ${f.examples.map((v) => JSON.stringify(v)).join(', ')}`);
  return parts.join('; ');
}

/** The paging found, in the definition's words. */
export function pagingText(p: PaginationSeen): string {
  const size = p.per_page_param ?? p.limit_param;
  const sized = size === undefined ? '' : `, page size ${size}`;
  switch (p.type) {
    case 'cursor':
      return `cursor (cursor_param ${p.cursor_param ?? 'cursor'}, cursor_path ${p.cursor_path ?? 'meta.next_cursor'}${size === undefined ? '' : `, per_page_param ${size}`})`;
    case 'page':
      return `page numbers (page_param ${p.page_param ?? 'page'}${p.first_page === 0 ? ', first_page 0' : ''}${size === undefined ? '' : `, per_page_param ${size}`})`;
    case 'offset':
      return `offset (offset_param ${p.offset_param ?? 'offset'}${size === undefined ? '' : `, limit_param ${size}`})`;
    default:
      return `none seen${sized}`;
  }
}

/** Where a list's values were read beyond its first pages: the date filter, each page and what it added. */
function historyLines(h: HistorySeen): string[] {
  const lines: string[] = [];
  if (h.filter !== undefined) lines.push(`  date filter: ${h.filter.from_param}${h.filter.to_param ? `/${h.filter.to_param}` : ''} (${h.filter.evidence})`);
  const pages = h.samples.map((s) => `${s.label}: ${s.error !== undefined ? `failed (${s.error})` : `${s.records ?? 0} records${s.added !== undefined ? `, ${s.added} not read before` : ''}`}`);
  lines.push(`  history: values read ${h.where}${pages.length > 0 ? ` (${pages.join('; ')})` : ''}${h.incomplete !== undefined ? `; not shown complete: ${h.incomplete}` : ''}`);
  return lines;
}

/** The report as text lines. */
export function discoveryLines(d: Discovery): string[] {
  const lines: string[] = [];
  if (d.kind === 'rest') {
    lines.push(`REST ${d.base_url}`);
    for (const e of d.entities) {
      const query = e.params === undefined ? '' : ` with ${new URLSearchParams(e.params).toString()} on every page`;
      lines.push('', `${e.entity} (${e.where}${query}): ${e.records} records in ${e.pages} page(s); records at ${e.records_path === '' ? '(the body)' : (e.records_path ?? '(none)')}; pagination: ${pagingText(e.pagination)}${e.total !== undefined ? `; meta.total ${e.total}` : ''}`);
      if (e.pagination.evidence !== undefined) lines.push(`  paging: ${e.pagination.evidence}`);
      for (const t of e.pagination.tried ?? []) lines.push(`  paging tried: ${t}`);
      for (const note of e.notes) lines.push(`  note: ${note}`);
      if (e.history !== undefined) lines.push(...historyLines(e.history));
      for (const f of e.fields) lines.push(`  ${describeField(f)}`);
      for (const r of e.references) lines.push(`  reference: ${referenceText(r)}`);
    }
    return lines;
  }
  lines.push(`${d.kind} (${d.client}): ${d.tables.length} tables and views`);
  for (const t of d.tables) {
    lines.push('', `${t.kind} ${t.name}: ${t.rows} rows (profile of ${t.sampled})`);
    lines.push(`  columns: ${t.columns.map((c) => `${c.name} ${c.type}`).join(', ')}`);
    if (t.primary_key.length > 0) lines.push(`  primary key: ${t.primary_key.join(', ')}`);
    for (const r of t.references) lines.push(`  reference: ${referenceText(r)}`);
    for (const i of t.indexes) lines.push(`  index ${i.name}${i.unique ? ' (unique)' : ''}: ${i.columns.join(', ')}`);
    for (const k of t.keyset) lines.push(`  keyset: cursor_column ${k.cursor_column}, tiebreak_column ${k.tiebreak_column} (index ${k.index}${k.exact ? '' : ', tie-breaker not in the index'})`);
    if (t.keyset.length === 0) lines.push('  keyset: none (no index starting with a date-time column, or no unique column)');
    if (t.date_columns.length > 0) lines.push(`  date columns: ${t.date_columns.join(', ')}`);
    for (const f of t.fields) lines.push(`  ${describeField(f)}`);
  }
  return lines;
}
