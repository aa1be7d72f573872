/**
 * `init`'s proposal: from what `discover` found, a draft connector definition. The mapping is
 * proposed by name (player_id, playerId, user_id → customer_id; amount_cents → amount_currency),
 * by format (epoch milliseconds → datetime unix_millis; integers in minor units → minor_units: 2;
 * decimal strings → number) and by values (codes mapped where every distinct value has an obvious
 * spec value). Every choice it cannot make is a `# TODO:` comment in the draft and a line of
 * `todos`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { specFields, type SpecFieldKind } from '../config/mapping-rules.js';
import { defaultSchemaDir } from '../spec/validator.js';
import type { Entity, Variant } from '../types.js';
import type { Discovery, EntityDiscovery, TableDiscovery } from './discover.js';
import type { FieldProfile } from './profile.js';
import type { SourceOptions } from './source-options.js';

export interface Draft {
  yaml: string;
  /** Every choice init could not make, one line each (also a `# TODO:` in the file). */
  todos: string[];
  /** Per entity: the mapping lines written (spec field → rule as YAML text). */
  mapping: Partial<Record<Entity, Record<string, string>>>;
}

const norm = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]/g, '');
const stripUnits = (n: string): string => n.replace(/(incents|cents|inminor|minor|x100)$/, '');
/** A name that says its values are thousands (accountSizeK, size_k, balance_thousands): the spec's value is 1000 times it. */
const THOUSANDS_NAME = /(?<=[a-z0-9])(K|_k|_thousands|Thousands|InThousands)$/;
const stripThousands = (name: string): string => norm(name.replace(THOUSANDS_NAME, ''));

/** Partner names for each spec field, normalized (lower case, letters and digits), most likely first. */
const SYNONYMS: Record<Entity, Record<string, string[]>> = {
  customers: {
    customer_id: ['customerid', 'playerid', 'userid', 'accountid', 'clientid', 'memberid', 'traderid', 'player', 'customer'],
    signup_date: ['signupdate', 'signuptime', 'signupat', 'signedupat', 'registrationdate', 'registeredat', 'registrationtime', 'createdat', 'created', 'createddate'],
    affiliate_id: ['affiliateid', 'affiliatecode', 'affiliate', 'affid', 'ibcode', 'ib', 'partnercode', 'referrer'],
    last_modified_date: ['lastmodifieddate', 'lastmodified', 'modifiedat', 'lastupdate', 'lastupdated', 'updatedat', 'modified', 'updated', 'changedat'],
    campaign_id: ['campaignid', 'campaign'],
    click_id: ['clickid', 'click'],
    lang_id: ['langid', 'language', 'lang', 'locale'],
    country_code: ['countrycode', 'country'],
    kyc_status_id: ['kycstatusid', 'kycstatus', 'kycstate', 'kyc'],
    sales_status_id: ['salesstatusid', 'salesstatus', 'salesstage'],
    first_name: ['firstname', 'givenname'],
    last_name: ['lastname', 'surname', 'familyname'],
    email: ['email', 'emailaddress', 'mail'],
    challenge_type: ['challengetype', 'plan', 'challenge', 'program'],
    phase: ['phase', 'stage'],
    account_size: ['accountsize', 'size', 'balance', 'balanceusd', 'sizek'],
  },
  transactions: {
    transaction_id: ['transactionid', 'txid', 'txnid', 'paymentid', 'id'],
    customer_id: ['customerid', 'playerid', 'userid', 'accountid', 'clientid', 'memberid', 'traderid'],
    transaction_type: ['transactiontype', 'type', 'typecode', 'txtype', 'kind', 'paymenttype'],
    amount_currency: ['amountcurrency', 'amount', 'value'],
    currency: ['currency', 'currencycode', 'ccy'],
    transaction_date: ['transactiondate', 'createdat', 'paidat', 'date', 'timestamp', 'ts', 'time', 'created'],
    status: ['status', 'statuscode', 'state'],
    amount_usd: ['amountusd', 'usdamount', 'amountinusd'],
    transaction_subtype: ['transactionsubtype', 'subtype', 'method', 'paymentmethod'],
    note: ['note', 'comment', 'description', 'memo'],
  },
  activity: {
    date: ['date', 'day', 'statdate', 'activitydate', 'tradedate', 'reportdate'],
    customer_id: ['customerid', 'playerid', 'userid', 'accountid', 'clientid', 'memberid', 'traderid'],
    game_type: ['gametype', 'gamecategory', 'category', 'game', 'product'],
    instrument: ['instrument', 'symbol', 'ticker'],
    currency: ['currency', 'currencycode', 'ccy'],
    bets_count: ['betscount', 'betcount', 'numbets', 'rounds'],
    total_bets: ['totalbets', 'bets', 'betsamount', 'stakes', 'turnover', 'wagered'],
    wins: ['wins', 'totalwins', 'winsamount', 'payouts'],
    ggr: ['ggr', 'grossgamingrevenue'],
    ngr: ['ngr', 'netgamingrevenue'],
    lots_traded: ['lotstraded', 'lots', 'volume'],
    pnl: ['pnl', 'profit', 'profitloss'],
    drawdown: ['drawdown', 'dd'],
    max_drawdown: ['maxdrawdown', 'maxdd'],
  },
};

/** Obvious partner codes of spec values, by the normalized code's start. */
const CODE_WORDS: Record<string, string[]> = {
  deposit: ['dep', 'deposit'],
  withdrawal: ['wd', 'wdr', 'withdraw', 'withdrawal', 'cashout'],
  bonus: ['bon', 'bonus'],
  adjustment: ['adj', 'adjust', 'adjustment'],
  other: ['oth', 'other'],
  challenge_fee: ['fee', 'challenge', 'challengefee'],
  payout: ['pay', 'payout'],
  reset_fee: ['reset', 'resetfee'],
  refund: ['ref', 'refund'],
  pending: ['pend', 'pending', 'new'],
  approved: ['app', 'approved', 'ok', 'success', 'completed', 'done'],
  declined: ['dec', 'declined', 'failed', 'rejected'],
  reversed: ['rev', 'reversed', 'chargeback'],
  rejected: ['rej', 'rejected', 'denied'],
  phase_1: ['p1', 'phase1'],
  phase_2: ['p2', 'phase2'],
  funded: ['f', 'funded', 'live'],
  failed: ['x', 'failed', 'breached', 'lost'],
};

/** Values a spec field takes: its enum, or the examples the spec gives for status fields. */
function specValues(variant: Variant, entity: Entity, field: string): string[] | undefined {
  const schema = JSON.parse(readFileSync(join(defaultSchemaDir(), variant, `${entity}.schema.json`), 'utf8')) as { properties: Record<string, { enum?: unknown[] }> };
  const values = schema.properties[field]?.enum?.filter((v): v is string => typeof v === 'string');
  if (values !== undefined && values.length > 0) return values;
  if (field === 'status') return ['pending', 'approved', 'declined', 'reversed'];
  if (field === 'kyc_status_id') return ['pending', 'approved', 'rejected'];
  return undefined;
}

/** A map of every distinct code to a spec value, or undefined when one of them is not obvious. */
function obviousMap(codes: readonly unknown[], values: readonly string[]): Record<string, string> | undefined {
  const map: Record<string, string> = {};
  for (const code of codes) {
    if (typeof code !== 'string') return undefined;
    const n = norm(code);
    if (values.includes(code)) continue;
    const hit = values.find((v) => (CODE_WORDS[v] ?? [norm(v)]).some((w) => n === w || (w.length >= 3 && n.startsWith(w))));
    if (hit === undefined) return undefined;
    map[code] = hit;
  }
  return map;
}

const yamlString = (s: string): string => (/^[A-Za-z_][A-Za-z0-9_.\-/]*$/.test(s) && !['true', 'false', 'null', 'yes', 'no', 'on', 'off'].includes(s.toLowerCase()) ? s : JSON.stringify(s));

interface FieldChoice {
  rule?: string;
  todo?: string;
  source?: string;
}

function chooseField(variant: Variant, entity: Entity, field: string, kind: SpecFieldKind, f: FieldProfile, database: boolean): FieldChoice {
  const from = f.name;
  const fmt = f.format;
  const ref = `from: ${yamlString(from)}`;
  if (kind === 'date-time') {
    if (fmt === 'epoch-millis') return { rule: `{ ${ref}, datetime: { format: unix_millis } }`, source: from };
    if (fmt === 'epoch-seconds') return { rule: `{ ${ref}, datetime: { format: unix_seconds } }`, source: from };
    if (fmt === 'iso-datetime-offset' || database) return { rule: yamlString(from), source: from };
    if (fmt === 'iso-datetime-local') return { rule: `{ ${ref}, datetime: { format: iso, zone: UTC } }`, todo: `${entity}.${field}: ${from} has no offset; UTC assumed (set datetime.zone to the partner's zone)`, source: from };
    if (fmt === 'sql-datetime') return { rule: `{ ${ref}, datetime: { format: sql, zone: UTC } }`, todo: `${entity}.${field}: ${from} has no offset; UTC assumed (set datetime.zone to the partner's zone)`, source: from };
    if (fmt === 'dd/MM/yyyy HH:mm') return { rule: `{ ${ref}, datetime: { format: "dd/MM/yyyy HH:mm", zone: UTC } }`, todo: `${entity}.${field}: ${from} is dd/MM/yyyy HH:mm without a zone; UTC assumed (set datetime.zone)`, source: from };
    return { rule: yamlString(from), todo: `${entity}.${field}: ${from} has format ${fmt ?? 'unknown'}; check that it is an ISO 8601 date-time with an offset`, source: from };
  }
  if (kind === 'number' || kind === 'integer') {
    if (f.minor_units !== undefined && kind === 'number') {
      const guessedByValues = !/name/.test(f.minor_units.reason);
      return { rule: `{ ${ref}, minor_units: 2 }`, source: from, ...(guessedByValues ? { todo: `${entity}.${field}: ${from} read as minor units (cents) because it is ${f.minor_units.reason}; remove minor_units if it is in units` } : {}) };
    }
    if (THOUSANDS_NAME.test(from) && (fmt === 'integer' || fmt === 'decimal')) return { rule: `{ ${ref}, multiply: 1000 }`, source: from };
    if (fmt === 'decimal-string' || fmt === 'integer-string') return { rule: `{ ${ref}, number: true }`, source: from };
    return { rule: yamlString(from), source: from };
  }
  const values = specValues(variant, entity, field);
  if (values !== undefined && f.distinct !== undefined) {
    const map = obviousMap(f.distinct, values);
    if (map === undefined) {
      return {
        rule: yamlString(from),
        todo: `${entity}.${field}: the codes of ${from} are not obvious: ${f.distinct.map((v) => JSON.stringify(v)).join(', ')}; add map: { <code>: <${values.join(' | ')}> }`,
        source: from,
      };
    }
    if (Object.keys(map).length === 0) return { rule: yamlString(from), source: from };
    const entries = Object.entries(map).map(([k, v]) => `${yamlString(k)}: ${v}`).join(', ');
    return { rule: `{ ${ref}, map: { ${entries} } }`, source: from };
  }
  if (values !== undefined && f.format !== 'text' && f.format !== undefined) {
    return { rule: yamlString(from), todo: `${entity}.${field}: ${from} holds codes (${f.examples.map((v) => JSON.stringify(v)).join(', ')}...) too many to list; add a map to spec values (${values.join(', ')})`, source: from };
  }
  return { rule: yamlString(from), source: from };
}

/** The source field that best matches a spec field, among those not yet used. */
function matchField(entity: Entity, field: string, fields: readonly FieldProfile[], used: Set<string>): FieldProfile | undefined {
  const candidates = fields.filter((f) => !used.has(f.name) && f.present > 0);
  const exact = candidates.find((f) => norm(f.name) === norm(field));
  if (exact) return exact;
  for (const synonym of SYNONYMS[entity][field] ?? []) {
    const hit = candidates.find((f) => norm(f.name) === synonym) ?? candidates.find((f) => stripUnits(norm(f.name)) === synonym) ?? candidates.find((f) => THOUSANDS_NAME.test(f.name) && stripThousands(f.name) === synonym);
    if (hit) return hit;
  }
  return undefined;
}

interface StreamDraft {
  lines: string[];
  mapping: Record<string, string>;
  /** The source field mapped to each spec field. */
  sources: Record<string, string>;
}

function mappingLines(variant: Variant, entity: Entity, fields: readonly FieldProfile[], database: boolean, todos: string[]): StreamDraft {
  const spec = specFields(variant, entity);
  const required = new Set((JSON.parse(readFileSync(join(defaultSchemaDir(), variant, `${entity}.schema.json`), 'utf8')) as { required: string[] }).required);
  const used = new Set<string>();
  const lines: string[] = [];
  const mapping: Record<string, string> = {};
  const sources: Record<string, string> = {};
  // Required fields first, so that an optional field cannot take their source (createdAt, date).
  const order = [...spec.keys()].sort((a, b) => Number(required.has(b)) - Number(required.has(a)));
  const chosen = new Map<string, FieldChoice>();
  for (const field of order) {
    const f = matchField(entity, field, fields, used);
    if (f === undefined) continue;
    used.add(f.name);
    chosen.set(field, chooseField(variant, entity, field, spec.get(field) ?? 'other', f, database));
  }
  // By type: a required date-time or date field without a name match takes the one unused field of that format.
  for (const field of order) {
    const kind = spec.get(field);
    if (chosen.has(field) || !required.has(field) || (kind !== 'date-time' && kind !== 'date')) continue;
    const formats = kind === 'date' ? ['date'] : ['iso-datetime-offset', 'iso-datetime-local', 'sql-datetime', 'dd/MM/yyyy HH:mm', 'epoch-millis', 'epoch-seconds'];
    const fits = fields.filter((f) => !used.has(f.name) && f.format !== undefined && formats.includes(f.format) && !CHANGE.test(f.name));
    if (fits.length !== 1) continue;
    const f = fits[0] as FieldProfile;
    used.add(f.name);
    const choice = chooseField(variant, entity, field, kind, f, database);
    const why = `${entity}.${field}: ${f.name} chosen by its format (${f.format}), the only such field; check it is the right one`;
    chosen.set(field, { ...choice, todo: choice.todo ? `${why}; ${choice.todo.replace(/^[^:]+: /, '')}` : why });
  }
  for (const field of spec.keys()) {
    const choice = chosen.get(field);
    if (choice === undefined) {
      if (required.has(field)) {
        const todo = `${entity}.${field}: no source field found for this required spec field; source fields: ${fields.map((f) => f.name).join(', ')}`;
        todos.push(todo);
        lines.push(`        # TODO: ${todo}`, `        # ${field}: <source field>`);
      }
      continue;
    }
    if (choice.todo) {
      todos.push(choice.todo);
      lines.push(`        # TODO: ${choice.todo}`);
    }
    lines.push(`        ${field}: ${choice.rule}`);
    mapping[field] = choice.rule as string;
    if (choice.source) sources[field] = choice.source;
  }
  const unused = fields.filter((f) => !used.has(f.name)).map((f) => f.name);
  if (unused.length > 0) lines.push(UNUSED + unused.join(', '));
  return { lines, mapping, sources };
}

const CHANGE = /(updated|modified|changed|lastupdate)/i;
/** The formats a REST change field may have (ISO text, or an epoch number: cursor_format). */
const CHANGE_FORMATS = ['iso-datetime-offset', 'iso-datetime-local', 'epoch-millis', 'epoch-seconds'];

const UNUSED = '        # source fields not mapped (not spec fields, or not recognised): ';

/** The mapping's lines without `name` in its list of unmapped fields (it drives the cursor, not a spec field). */
function usedAsCursor(lines: string[], name: string | undefined): string[] {
  if (name === undefined) return lines;
  return lines.flatMap((line) => {
    if (!line.startsWith(UNUSED)) return [line];
    const rest = line.slice(UNUSED.length).split(', ').filter((f) => f !== name);
    return [`        # ${name} drives the cursor (not a spec field)`, ...(rest.length > 0 ? [UNUSED + rest.join(', ')] : [])];
  });
}
const SCHEDULE = { customers: '"*/4 * * * *"', transactions: '"*/4 * * * *"', activity: '"15 0 * * *"' } as const;

function restStreamLines(variant: Variant, e: EntityDiscovery, todos: string[], dateParam: string): { lines: string[]; mapping: Record<string, string> } {
  const lines: string[] = [`  ${e.entity}:`, `    path: ${yamlString(e.where)}`];
  if (e.records_path !== undefined && e.records_path !== 'data') {
    if (e.records_path === '') {
      const todo = `${e.entity}: the endpoint answers a bare array; the connector expects the records under a key (records_path)`;
      todos.push(todo);
      lines.push(`    # TODO: ${todo}`);
    } else lines.push(`    records_path: ${yamlString(e.records_path)}`);
  }
  if (e.pagination.type === 'cursor') {
    lines.push('    pagination:', '      type: cursor', '      per_page: 500', `      cursor_path: ${e.pagination.cursor_path}`);
  } else if (e.pagination.type === 'page') {
    lines.push('    pagination:', '      type: page', '      per_page: 500');
  } else {
    const todo = `${e.entity}: no pagination seen in ${e.pages} page(s) of ${e.records} records; page numbers assumed`;
    todos.push(todo);
    lines.push(`    # TODO: ${todo}`, '    pagination:', '      type: page', '      per_page: 500');
  }
  const draft = mappingLines(variant, e.entity, e.fields, false, todos);
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
    } else {
      const dateSource = draft.sources.transaction_date ?? draft.sources.signup_date ?? '<field>';
      const todo = `${e.entity}: no change field held as a date-time (updated_at, lastUpdate...); cursor on ${dateSource} with lookback P3D, and its from/to parameters are guesses`;
      todos.push(todo);
      lines.push(`    # TODO: ${todo}`, '    incremental:', '      mode: cursor', `      cursor_field: ${yamlString(dateSource)}`, '      from_param: from', '      to_param: to', '      lookback: P3D');
    }
  }
  const cursorField = /^ {6}cursor_field: (.*)$/m.exec(lines.join('\n'))?.[1];
  lines.push('    mapping:', '      passthrough: false', '      fields:', ...usedAsCursor(draft.lines, cursorField), `    schedule: ${SCHEDULE[e.entity]}`);
  return { lines, mapping: draft.mapping };
}

const TABLE_NAMES: Record<Entity, RegExp> = {
  customers: /(player|customer|account|user|client|member|trader)s?$/i,
  transactions: /(payment|transaction|deposit|txn|cashier|transfer)s?$/i,
  activity: /(daily|activity|stats?|summary|agg|gaming)/i,
};

function pickTable(entity: Entity, tables: readonly TableDiscovery[], chosen: string | undefined, taken: Set<string>): TableDiscovery | undefined {
  if (chosen !== undefined) return tables.find((t) => t.name === chosen);
  return tables.find((t) => !taken.has(t.name) && TABLE_NAMES[entity].test(t.name) && (entity === 'activity' ? t.date_columns.length > 0 : true));
}

function sqlStreamLines(variant: Variant, entity: Entity, t: TableDiscovery, kind: 'db' | 'warehouse', todos: string[]): { lines: string[]; mapping: Record<string, string> } {
  const lines: string[] = [`  ${entity}:`, `    ${kind === 'db' ? 'table' : 'view'}: ${yamlString(t.name)}`];
  const draft = mappingLines(variant, entity, t.fields, true, todos);
  if (entity === 'activity' || kind === 'warehouse') {
    const dateColumn = entity === 'activity' ? (t.date_columns.find((c) => draft.sources.date === c) ?? t.date_columns[0]) : t.date_columns.find((c) => CHANGE.test(c)) ?? t.date_columns[0];
    if (dateColumn === undefined) {
      const todo = `${entity}: ${t.name} has no DATE column to read whole days by; set date_column`;
      todos.push(todo);
      lines.push(`    # TODO: ${todo}`, '    # date_column: <column>');
    } else lines.push(`    date_column: ${yamlString(dateColumn)}`);
    lines.push('    incremental:', '      mode: daily', '      late_days: 2');
  } else {
    const keyset = t.keyset[0];
    if (keyset === undefined) {
      const todo = `${entity}: ${t.name} has no index on (a date-time column, a unique column); a keyset needs one (ask the partner for an index on (updated_at, id))`;
      todos.push(todo);
      lines.push(`    # TODO: ${todo}`, '    # cursor_column: <change column>', '    # tiebreak_column: <unique column>');
    } else {
      if (!keyset.change_column) {
        const todo = `${entity}: ${keyset.cursor_column} is not named like a change column; a status change is only read again within the lookback (P3D)`;
        todos.push(todo);
        lines.push(`    # TODO: ${todo}`);
      }
      lines.push(`    cursor_column: ${yamlString(keyset.cursor_column)}    # keyset index ${keyset.index}`, `    tiebreak_column: ${yamlString(keyset.tiebreak_column)}`);
    }
    lines.push('    incremental:', '      mode: cursor', `      lookback: ${keyset?.change_column === false ? 'P3D' : 'PT10M'}`);
  }
  lines.push('    mapping:', '      passthrough: false', '      fields:', ...usedAsCursor(draft.lines, t.keyset[0]?.cursor_column), `    schedule: ${SCHEDULE[entity]}`);
  return { lines, mapping: draft.mapping };
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
        const todo = `${e.entity}: ${e.where} answered no records; its mapping could not be proposed`;
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
    const taken = new Set<string>();
    for (const entity of ['customers', 'transactions', 'activity'] as Entity[]) {
      const table = pickTable(entity, found.tables, options.tables[entity], taken);
      if (table === undefined) {
        const todo = `${entity}: no table or view recognised (tables: ${found.tables.map((t) => t.name).join(', ')}); name it with --${entity} <table>`;
        todos.push(todo);
        streams.push(`  # TODO: ${todo}`);
        continue;
      }
      taken.add(table.name);
      const s = sqlStreamLines(variant, entity, table, options.kind, todos);
      streams.push(...s.lines);
      mapping[entity] = s.mapping;
    }
  }
  const tail = ['', '# Partner affiliate codes → the service\'s affiliate ids (customers\' affiliate_id).', 'affiliates:', '  map: {}', '  unmapped: keep', ''];
  return { yaml: [...head, ...streams, ...tail].join('\n'), todos, mapping };
}
