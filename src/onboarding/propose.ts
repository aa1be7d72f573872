/**
 * `init`'s proposal: from what `discover` found, a draft connector definition: the source, one
 * stream per entity (its table, view or list path, pagination, keyset or window) and its mapping
 * (propose-fields.ts). Every choice it cannot make for sure is a `# TODO:` comment in the draft and
 * a line of `todos`, but the draft is always a whole definition: it loads, so `check` can run on it.
 */
import type { Entity, Variant } from '../types.js';
import type { Discovery, EntityDiscovery, SourceClock, TableDiscovery } from './discovery.js';
import type { FieldProfile } from './profile.js';
import { mappingLines, usedAsCursor, type Structure } from './propose-fields.js';
import type { SourceOptions } from './source-options.js';
import { CHANGE, FEE_TABLE, tableNamePattern, yamlString } from './vocabulary.js';

export interface Draft {
  yaml: string;
  /** Every choice init could not make, one line each (also a `# TODO:` in the file). */
  todos: string[];
  /** Per entity: the mapping lines written (spec field → rule as YAML text). */
  mapping: Partial<Record<Entity, Record<string, string>>>;
}

/** The formats a REST change field may have (ISO text, or an epoch number: cursor_format). */
const CHANGE_FORMATS = ['iso-datetime-offset', 'iso-datetime-local', 'epoch-millis', 'epoch-seconds'];

const SCHEDULE = { customers: '"*/4 * * * *"', transactions: '"*/4 * * * *"', activity: '"15 0 * * *"' } as const;

/** The pagination block: the parameters discover saw advance, with its evidence; page numbers with a TODO when none did. */
function paginationLines(e: EntityDiscovery, todos: string[]): string[] {
  const p = e.pagination;
  const evidence = p.evidence === undefined ? [] : [`      # discover: ${p.evidence}`];
  if (p.type === 'cursor') {
    return ['    pagination:', ...evidence, '      type: cursor', '      per_page: 500', ...(p.per_page_param ? [`      per_page_param: ${yamlString(p.per_page_param)}`] : []), `      cursor_param: ${yamlString(p.cursor_param ?? 'cursor')}`, `      cursor_path: ${yamlString(p.cursor_path ?? 'meta.next_cursor')}`];
  }
  if (p.type === 'page') {
    return ['    pagination:', ...evidence, '      type: page', '      per_page: 500', `      page_param: ${yamlString(p.page_param ?? 'page')}`, ...(p.per_page_param ? [`      per_page_param: ${yamlString(p.per_page_param)}`] : []), ...(p.first_page === 0 ? ['      first_page: 0'] : [])];
  }
  if (p.type === 'offset') {
    return ['    pagination:', ...evidence, '      type: offset', '      per_page: 500', `      offset_param: ${yamlString(p.offset_param ?? 'offset')}`, ...(p.limit_param ? [`      limit_param: ${yamlString(p.limit_param)}`] : [])];
  }
  if (e.records === 0) return ['    pagination:', '      type: page', '      per_page: 500'];
  const tried = p.tried && p.tried.length > 0 ? ` (${p.tried.join('; ')})` : '';
  const todo = `${e.entity}: no next-page parameter seen to advance in ${e.pages} page(s) of ${e.records} records${tried}; page numbers assumed: if the partner pages, set pagination (type cursor with cursor_param and cursor_path, type page with page_param, or type offset with offset_param)`;
  todos.push(todo);
  return [`    # TODO: ${todo}`, '    pagination:', '      type: page', '      per_page: 500'];
}

/** Window parameters that are not already constant parameters of the stream (the user's own `from`). */
function windowNames(guess: [string, string], constants: Record<string, string>, entity: Entity): { names: [string, string]; note?: string } {
  if (!(guess[0] in constants) && !(guess[1] in constants)) return { names: guess };
  const names: [string, string] = entity === 'customers' ? ['modified_since', 'modified_until'] : ['updated_since', 'updated_until'];
  const taken = guess.filter((n) => n in constants);
  return { names, note: `${taken.join(', ')} ${taken.length === 1 ? 'is a constant parameter' : 'are constant parameters'} of the list path (kept on every request), so the window is sent as ${names.join(', ')}` };
}

function restStreamLines(variant: Variant, e: EntityDiscovery, todos: string[], dateParam: string): { lines: string[]; mapping: Record<string, string> } {
  const lines: string[] = [`  ${e.entity}:`, `    path: ${yamlString(e.where)}`];
  if (e.records_path !== undefined && e.records_path !== 'data') {
    if (e.records_path === '') {
      const todo = `${e.entity}: the endpoint answers a bare array; the connector expects the records under a key (records_path)`;
      todos.push(todo);
      lines.push(`    # TODO: ${todo}`);
    } else lines.push(`    records_path: ${yamlString(e.records_path)}`);
  }
  const constants = e.params ?? {};
  if (Object.keys(constants).length > 0) {
    lines.push('    # the query of the list path given to init: sent with every request of the stream', '    params:');
    for (const [name, value] of Object.entries(constants)) lines.push(`      ${yamlString(name)}: ${yamlString(value)}`);
  }
  lines.push(...paginationLines(e, todos));
  // The profile holds the first pages and the records the history sample added.
  const sampled = e.records + (e.history?.samples.reduce((n, x) => n + (x.added ?? 0), 0) ?? 0);
  const structure: Structure = { where: e.where, customerRefs: e.references.filter((r) => r.table === 'customers'), sampled };
  const draft = mappingLines(variant, e.entity, e.fields, false, todos, structure);
  if (e.entity === 'activity') {
    lines.push('    incremental:', '      mode: daily', `      date_param: ${yamlString(dateParam)}`, '      late_days: 2');
  } else {
    // The change field: the one mapped to last_modified_date, else one named like a change stamp,
    // held as ISO text or as epoch milliseconds or seconds (its bounds then sent in that unit).
    const stamp = (f: FieldProfile) => CHANGE_FORMATS.includes(f.format ?? '');
    const named = draft.sources.last_modified_date;
    const change = e.fields.find((f) => f.name === named && stamp(f)) ?? e.fields.find((f) => CHANGE.test(f.name) && stamp(f));
    const params = e.entity === 'customers' ? ['modified_since', 'modified_until'] : ['updated_since', 'updated_until'];
    if (change !== undefined) {
      const epoch = change.format === 'epoch-millis' ? 'unix_millis' : change.format === 'epoch-seconds' ? 'unix_seconds' : undefined;
      const todo = `the spec's window parameters assumed (${params.join(', ')})${epoch ? `, sent as ${epoch === 'unix_millis' ? 'epoch milliseconds' : 'epoch seconds'} like ${change.name}` : ''}: confirm the partner filters ${change.name} by them`;
      lines.push('    incremental:', '      mode: cursor', `      cursor_field: ${yamlString(change.name)}`, ...(epoch ? [`      cursor_format: ${epoch}`] : []), `      # TODO: ${todo}`, `      from_param: ${params[0]}`, `      to_param: ${params[1]}`, '      lookback: PT10M');
      todos.push(`${e.entity}: ${todo}`);
    } else if (e.records === 0) {
      // Nothing to read the change field from: the spec's names (last_modified_date; a transaction's own date).
      const field = e.entity === 'customers' ? 'last_modified_date' : 'transaction_date';
      const todo = `${e.entity}: cursor on the spec's ${field} with the spec's window parameters (${params.join(', ')}), assumed: no records to see them in`;
      todos.push(todo);
      lines.push(`    # TODO: ${todo}`, '    incremental:', '      mode: cursor', `      cursor_field: ${field}`, `      from_param: ${params[0]}`, `      to_param: ${params[1]}`, `      lookback: ${e.entity === 'customers' ? 'PT10M' : 'P3D'}`);
    } else {
      const dateSource = draft.sources.transaction_date ?? draft.sources.signup_date ?? (e.entity === 'customers' ? 'signup_date' : 'transaction_date');
      const format = e.fields.find((f) => f.name === dateSource)?.format;
      const epoch = format === 'epoch-millis' ? 'unix_millis' : format === 'epoch-seconds' ? 'unix_seconds' : undefined;
      const window = windowNames(['from', 'to'], constants, e.entity);
      const todo = `${e.entity}: no change field held as a date-time (updated_at, lastUpdate...); cursor on ${dateSource} with lookback P3D, and its ${window.names.join('/')} parameters are guesses${window.note ? ` (${window.note})` : ''}`;
      todos.push(todo);
      lines.push(`    # TODO: ${todo}`, '    incremental:', '      mode: cursor', `      cursor_field: ${yamlString(dateSource)}`, ...(epoch ? [`      cursor_format: ${epoch}`] : []), `      from_param: ${window.names[0]}`, `      to_param: ${window.names[1]}`, '      lookback: P3D');
    }
  }
  const cursorField = /^ {6}cursor_field: (.*)$/m.exec(lines.join('\n'))?.[1];
  lines.push('    mapping:', '      passthrough: false', '      fields:', ...usedAsCursor(draft.lines, cursorField), `    schedule: ${SCHEDULE[e.entity]}`);
  return { lines, mapping: draft.mapping };
}

interface Picked {
  table: TableDiscovery;
  /** Why this table, when its name alone does not say it. */
  evidence?: string;
}

/** The table or view of each entity: named by the user, else by its name; prop-trading transactions also as the one table left. */
function pickTables(variant: Variant, tables: readonly TableDiscovery[], named: Partial<Record<Entity, string>>): Partial<Record<Entity, Picked>> {
  const picked: Partial<Record<Entity, Picked>> = {};
  const taken = new Set<string>();
  for (const entity of ['customers', 'activity', 'transactions'] as Entity[]) {
    const chosen = named[entity];
    const table = chosen !== undefined
      ? tables.find((t) => t.name === chosen)
      : tables.find((t) => !taken.has(t.name) && tableNamePattern(entity, variant).test(t.name) && (entity === 'activity' ? t.date_columns.length > 0 : true));
    if (table !== undefined) {
      picked[entity] = { table };
      taken.add(table.name);
    }
  }
  // By structure: of the tables left that refer to the customers, the one with a DATE column holds
  // the daily activity, the one without holds the transactions.
  const customers = picked.customers?.table.name;
  if (customers === undefined) return picked;
  for (const entity of ['activity', 'transactions'] as const) {
    if (picked[entity] !== undefined) continue;
    const daily = entity === 'activity';
    const left = tables.filter((t) => !taken.has(t.name) && t.references.some((r) => r.table === customers) && (t.date_columns.length > 0) === daily);
    if (left.length !== 1) continue;
    const table = left[0] as TableDiscovery;
    picked[entity] = { table, evidence: `the one table left that refers to ${customers} ${daily ? 'and has a DATE column' : 'and has no DATE column'}` };
    taken.add(table.name);
  }
  return picked;
}

/** A keyset when no index gives one: the change column (else the record's date-time) and the key. */
function keysetWithoutIndex(t: TableDiscovery, sources: Record<string, string>): { cursor: string; tiebreak: string } {
  const times = t.columns.filter((c) => c.kind === 'timestamp' || c.kind === 'timestamptz').map((c) => c.name);
  const cursor = times.find((c) => CHANGE.test(c)) ?? times.find((c) => c === sources.transaction_date || c === sources.signup_date) ?? times[0] ?? 'updated_at';
  const tiebreak = (t.primary_key.length === 1 ? t.primary_key[0] : undefined) ?? sources.transaction_id ?? sources.customer_id ?? 'id';
  return { cursor, tiebreak };
}

function sqlStreamLines(variant: Variant, entity: Entity, picked: Picked, kind: 'db' | 'warehouse', todos: string[], customersKey: { table: string; key: string } | undefined): { lines: string[]; mapping: Record<string, string>; sources: Record<string, string> } {
  const t = picked.table;
  const lines: string[] = [`  ${entity}:`];
  if (picked.evidence) lines.push(`    # ${entity} ← ${t.name}: ${picked.evidence}`);
  lines.push(`    ${kind === 'db' ? 'table' : 'view'}: ${yamlString(t.name)}`);
  const structure: Structure = {
    where: t.name,
    ...(t.primary_key.length === 1 ? { primaryKey: t.primary_key[0] } : {}),
    customerRefs: customersKey ? t.references.filter((r) => r.table === customersKey.table && r.key === customersKey.key) : [],
    sampled: t.sampled,
    feeTable: entity === 'transactions' && FEE_TABLE.test(t.name),
  };
  const draft = mappingLines(variant, entity, t.fields, true, todos, structure);
  let cursorColumn: string | undefined;
  if (entity === 'activity' || kind === 'warehouse') {
    const dateColumn = entity === 'activity' ? (t.date_columns.find((c) => draft.sources.date === c) ?? t.date_columns[0]) : t.date_columns.find((c) => CHANGE.test(c)) ?? t.date_columns[0];
    // Without a DATE column, a warehouse view is read by a date-time column: each UTC day as the range of its instants.
    const times = kind === 'warehouse' ? t.columns.filter((c) => c.kind === 'timestamp' || c.kind === 'timestamptz').map((c) => c.name) : [];
    const changeTime = entity === 'activity' ? undefined : times.find((c) => CHANGE.test(c));
    const ownTime = times.find((c) => c === (entity === 'activity' ? draft.sources.date : entity === 'transactions' ? draft.sources.transaction_date : draft.sources.signup_date));
    if (dateColumn === undefined && (changeTime ?? ownTime) !== undefined) {
      const column = (changeTime ?? ownTime) as string;
      lines.push(`    # date_column: ${column} is a date-time (${t.name} has no DATE column): each UTC day is read as the range of its instants`);
      if (changeTime === undefined && entity !== 'activity') {
        const todo = `${entity}: ${t.name} has no change column; days are read by ${column}, so a record changed after its day is not read again: name a column the partner updates on every change, if it has one`;
        todos.push(todo);
        lines.push(`    # TODO: ${todo}`);
      }
      lines.push(`    date_column: ${yamlString(column)}`);
    } else if (dateColumn === undefined) {
      const guess = draft.sources.date ?? draft.sources.transaction_date ?? draft.sources.signup_date ?? 'date';
      const todo = `${entity}: ${t.name} has no DATE column to read whole days by; ${guess} written: name a DATE column (or read the table by a query that selects the day)`;
      todos.push(todo);
      lines.push(`    # TODO: ${todo}`, `    date_column: ${yamlString(guess)}`);
    } else lines.push(`    date_column: ${yamlString(dateColumn)}`);
    lines.push('    incremental:', '      mode: daily', '      late_days: 2');
  } else {
    const keyset = t.keyset[0];
    if (keyset === undefined) {
      const { cursor, tiebreak } = keysetWithoutIndex(t, draft.sources);
      const todo = `${entity}: ${t.name} has no index on (a date-time column, a unique column); keyset on (${cursor}, ${tiebreak}) written, but each page scans the table: ask the partner for an index on (${cursor}, ${tiebreak})`;
      todos.push(todo);
      cursorColumn = cursor;
      lines.push(`    # TODO: ${todo}`, `    cursor_column: ${yamlString(cursor)}`, `    tiebreak_column: ${yamlString(tiebreak)}`);
    } else {
      if (!keyset.change_column) {
        const todo = `${entity}: ${keyset.cursor_column} is not named like a change column; a status change is only read again within the lookback (P3D)`;
        todos.push(todo);
        lines.push(`    # TODO: ${todo}`);
      }
      cursorColumn = keyset.cursor_column;
      lines.push(`    cursor_column: ${yamlString(keyset.cursor_column)}    # keyset index ${keyset.index}`, `    tiebreak_column: ${yamlString(keyset.tiebreak_column)}`);
    }
    const changing = keyset === undefined ? CHANGE.test(cursorColumn ?? '') : keyset.change_column;
    lines.push('    incremental:', '      mode: cursor', `      lookback: ${changing ? 'PT10M' : 'P3D'}`);
  }
  lines.push('    mapping:', '      passthrough: false', '      fields:', ...usedAsCursor(draft.lines, cursorColumn), `    schedule: ${SCHEDULE[entity]}`);
  return { lines, mapping: draft.mapping, sources: draft.sources };
}

/**
 * What proves or disproves the source's `timezone: UTC`: its zone-less date-time columns (a
 * DATETIME, a timestamp without time zone) against its own clock. None: nothing is read in a local
 * zone, UTC is proven. A newest value ahead of the source's UTC clock: the times are local, east
 * of UTC, by about that many hours. Otherwise UTC is assumed, not proven (a zone west of UTC, or
 * data that is not fresh, looks the same), and the TODO says what was seen.
 */
export function timezoneEvidence(tables: readonly TableDiscovery[], clock: SourceClock | undefined): { todo?: string; evidence?: string } {
  const zoneless = tables.flatMap((t) => (t.zoneless ?? []).map((z) => ({ ...z, where: `${t.name}.${z.column}` })));
  const local = tables.flatMap((t) => t.columns.filter((c) => /local/i.test(c.name) && (c.kind === 'timestamp' || c.kind === 'untyped')).map((c) => `${t.name}.${c.name}`));
  if (zoneless.length === 0 && local.length === 0) return { evidence: "every date-time column of the streams' tables carries its offset or is stored in UTC (timestamptz, MySQL TIMESTAMP, epoch numbers): none is read in a local zone" };
  const named = local.length > 0 ? `; ${local.join(', ')} ${local.length === 1 ? 'is' : 'are'} named as local time${local.length === 1 ? '' : 's'}` : '';
  const newest = zoneless.filter((z) => z.newest !== undefined).sort((a, b) => Date.parse(b.newest as string) - Date.parse(a.newest as string))[0];
  const utc = clock === undefined ? Number.NaN : Date.parse(clock.utc);
  const server = clock?.server_zone !== undefined ? `, the server's zone is ${clock.server_zone}` : '';
  const columns = zoneless.map((z) => z.where).join(', ') || local.join(', ');
  if (newest !== undefined && Number.isFinite(utc)) {
    const ahead = (Date.parse(newest.newest as string) - utc) / 3_600_000;
    if (ahead >= 0.25) {
      const hours = Math.round(ahead * 4) / 4;
      return { todo: `source.timezone: ${newest.where}'s newest value ${(newest.newest as string).slice(0, 19)} read as UTC is ${hours} h ahead of the source's clock (${clock?.utc})${server}${named}: its times are local, about UTC+${hours}: set timezone to the partner's zone (an IANA name such as Europe/Malta)` };
    }
    return { todo: `source.timezone: UTC assumed, not proven: ${columns} hold no zone; the newest (${newest.where} ${(newest.newest as string).slice(0, 19)}) is not ahead of the source's clock (${clock?.utc})${server}${named}: confirm that the partner writes them in UTC, or set timezone to its zone` };
  }
  return { todo: `source.timezone: UTC assumed, not proven: ${columns} hold no zone${server}${named}: confirm that the partner writes them in UTC, or set timezone to its zone` };
}

/** The draft definition of `partner` from a discovery. */
export function proposeDefinition(partner: string, variant: Variant, options: SourceOptions, found: Discovery): Draft {
  const todos: string[] = [];
  const mapping: Draft['mapping'] = {};
  const head = [
    '# yaml-language-server: $schema=../../src/config/partner-definition.schema.json',
    '#',
    `# Draft connector definition written by \`partner-sync init ${partner}\` from what \`partner-sync discover\``,
    '# found. Review every TODO below, then run `partner-sync check --partner ' + partner + '`.',
    '',
    `partner: ${partner}`,
    `variant: ${variant}`,
    '',
    'source:',
  ];
  const streams: string[] = ['', 'streams:'];
  if (options.kind === 'rest' && found.kind === 'rest') {
    head.push('  type: rest', `  base_url: ${yamlString(options.baseUrl)}`, '  auth:');
    if (options.auth === 'oauth2') head.push('    type: oauth2_client_credentials', ...(options.tokenUrl ? [`    token_url: ${yamlString(options.tokenUrl)}`] : []), `    client_id: ${yamlString(options.clientId ?? '')}`, `    client_secret: \${${options.authEnv}}`);
    else if (options.auth === 'bearer') head.push('    type: bearer', `    token: \${${options.authEnv}}`);
    else head.push('    type: api_key', `    header: ${yamlString(options.apiKeyHeader ?? 'X-API-Key')}`, `    key: \${${options.authEnv}}`);
    head.push('  rate_limit:', '    requests_per_minute: 1000', '  run_budget: PT15M');
    for (const e of found.entities) {
      if (e.records === 0) {
        const todo = `${e.entity}: ${e.where} answered no records${e.notes.length > 0 ? ` (${e.notes.join('; ')})` : ''}; the spec's field names are written: check them against the partner's records`;
        todos.push(todo);
        streams.push(`  # TODO: ${todo}`);
      }
      const s = restStreamLines(variant, e, todos, options.dateParam);
      streams.push(...s.lines);
      mapping[e.entity] = s.mapping;
    }
  } else if (options.kind !== 'rest' && found.kind !== 'rest') {
    head.push(`  type: ${options.kind}`, `  client: ${options.client}`, `  url: \${${options.urlEnv}}`, '  timezone: UTC', '  statement_timeout: PT5M', '  run_budget: PT15M');
    if (options.kind === 'db') head.push('  page_size: 5000', '  safety_lag: PT5S');
    const picked = pickTables(variant, found.tables, options.tables);
    const zone = timezoneEvidence(Object.values(picked).map((p) => p.table), found.clock);
    if (zone.todo !== undefined) todos.push(zone.todo);
    head.splice(head.indexOf('  timezone: UTC'), 0, zone.todo !== undefined ? `  # TODO: ${zone.todo}` : `  # timezone: ${zone.evidence}`);
    let customersKey: { table: string; key: string } | undefined;
    for (const entity of ['customers', 'transactions', 'activity'] as Entity[]) {
      const table = picked[entity];
      if (table === undefined) {
        const todo = `${entity}: no table or view recognised (tables: ${found.tables.map((t) => t.name).join(', ')}); name it with --${entity} <table>`;
        todos.push(todo);
        streams.push(`  # TODO: ${todo}`);
        continue;
      }
      const s = sqlStreamLines(variant, entity, table, options.kind, todos, customersKey);
      if (entity === 'customers' && s.sources.customer_id !== undefined) customersKey = { table: table.table.name, key: s.sources.customer_id };
      streams.push(...s.lines);
      mapping[entity] = s.mapping;
    }
  }
  const tail = ['', '# Partner affiliate codes → the service\'s affiliate ids (customers\' affiliate_id).', 'affiliates:', '  map: {}', '  unmapped: keep', ''];
  return { yaml: [...head, ...streams, ...tail].join('\n'), todos, mapping };
}
