/**
 * The checks of a connector definition that its JSON schema cannot express: a secure base URL,
 * the file name, mapping targets, cron expressions, zones, connection URL schemes and SQL
 * queries. They run over unchecked data, even when the schema found errors.
 */
import { Duration, IANAZone } from 'luxon';
import { validate as validateCron, validateDetailed as explainCron } from 'node-cron';
import { isRecord } from './yaml-position.js';
import { ENTITIES, isVariant } from '../types.js';
import type { Entity, Variant } from '../types.js';
import { mappingProblems } from './mapping-rules.js';
import type { DbSource } from './definition.js';
import type { SchemaProblem } from './definition-schema.js';
import { insecureUrlReason } from './secure-url.js';
import { scanQuery } from './query-scan.js';
import { DEFINITION_DEFAULTS, QUERY_PARAMETERS, URL_SCHEMES } from './definition-defaults.js';

/** A duration of the schema's form (PT10M, P3D, PT0.5S) in milliseconds; undefined when not one. */
export function durationMs(text: string): number | undefined {
  if (!/^P(?=\d|T\d)(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$/.test(text)) return undefined;
  const duration = Duration.fromISO(text);
  return duration.isValid ? Math.round(duration.as('milliseconds')) : undefined;
}

export interface Problem {
  path: string[];
  message: string;
  at?: SchemaProblem['at'];
  /** A place inside the string value at path (a query's `;`): its line when the value is written so that it can be found. */
  within?: Within;
}

/** A character offset in a string value, and the value it was found in (to check it is the one written in the file). */
export interface Within {
  text: string;
  offset: number;
}

/** Checks the schema cannot express. Written over unchecked data: it runs even when the schema found errors. */
export function semanticProblems(data: Record<string, unknown>, raw: Record<string, unknown>, fileStem: string, unresolved: ReadonlySet<string>): Problem[] {
  const problems: Problem[] = [];
  const usable = (path: string[], value: unknown): value is string => typeof value === 'string' && !unresolved.has(path.join('.'));

  if (typeof data.partner === 'string' && data.partner !== fileStem) {
    problems.push({ path: ['partner'], message: `must equal the file's base name ${JSON.stringify(fileStem)}, got ${JSON.stringify(data.partner)} (rename the file or the id)` });
  }

  const source = isRecord(data.source) ? data.source : {};
  const rawSource = isRecord(raw.source) ? raw.source : {};
  if (source.type === 'db' || source.type === 'warehouse') {
    problems.push(...databaseSourceProblems(source, rawSource, usable));
  } else {
    problems.push(...restSourceProblems(source, usable));
  }

  const reconcileSchedule = isRecord(data.reconcile) ? data.reconcile.schedule : undefined;
  if (usable(['reconcile', 'schedule'], reconcileSchedule) && !validateCron(reconcileSchedule)) {
    problems.push({ path: ['reconcile', 'schedule'], message: `not a valid cron expression (5 or 6 fields, UTC): ${explainCron(reconcileSchedule).errors.map((e) => e.message).join('; ') || JSON.stringify(reconcileSchedule)}` });
  }
  const variant: Variant | undefined = isVariant(data.variant) ? data.variant : undefined;
  const streams = isRecord(data.streams) ? data.streams : {};
  for (const entity of ENTITIES) {
    const stream = streams[entity];
    if (!isRecord(stream)) continue;
    const schedule = stream.schedule;
    if (usable(['streams', entity, 'schedule'], schedule) && !validateCron(schedule)) {
      const details = explainCron(schedule).errors.map((e) => e.message).join('; ');
      problems.push({ path: ['streams', entity, 'schedule'], message: `not a valid cron expression (5 or 6 fields, UTC): ${details || JSON.stringify(schedule)}` });
    }
    const mapping = isRecord(stream.mapping) ? stream.mapping : {};
    if (variant !== undefined && isRecord(mapping.fields)) {
      for (const p of mappingProblems(variant, entity, mapping.fields)) {
        problems.push({ path: ['streams', entity, 'mapping', 'fields', p.field, ...p.key], message: p.message, at: p.key.length === 0 ? 'key' : 'value' });
      }
    }
    if (source.type === 'db') problems.push(...dbStreamProblems(entity, stream, usable));
    if ((source.type === 'db' || source.type === 'warehouse') && typeof source.client === 'string' && Object.hasOwn(IDENTIFIER_MAX_LENGTH, source.client)) {
      const max = IDENTIFIER_MAX_LENGTH[source.client as DbSource['client']];
      for (const key of ['table', 'view', 'cursor_column', 'tiebreak_column', 'date_column']) {
        const name = stream[key];
        if (typeof name === 'string' && name.split('.').some((part) => part.length > max)) {
          problems.push({ path: ['streams', entity, key], message: `a name may have at most ${max} characters on ${String(source.client)}` });
        }
      }
    }
  }
  return problems;
}

/** The longest identifier (each part of schema.name) each client's server accepts. */
const IDENTIFIER_MAX_LENGTH: Record<DbSource['client'], number> = { mysql: 64, postgres: 63, sqlite: 128 };

type Usable = (path: string[], value: unknown) => value is string;

function restSourceProblems(source: Record<string, unknown>, usable: Usable): Problem[] {
  const problems: Problem[] = [];
  if (usable(['source', 'base_url'], source.base_url)) {
    const reason = insecureUrlReason(source.base_url);
    if (reason !== undefined) problems.push({ path: ['source', 'base_url'], message: reason });
  }
  const auth = isRecord(source.auth) ? source.auth : {};
  if (usable(['source', 'auth', 'token_url'], auth.token_url)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(auth.token_url)) {
      const reason = insecureUrlReason(auth.token_url);
      if (reason !== undefined) problems.push({ path: ['source', 'auth', 'token_url'], message: reason });
    } else if (!auth.token_url.startsWith('/')) {
      problems.push({ path: ['source', 'auth', 'token_url'], message: `must be a path starting with / (joined to base_url) or an absolute https:// URL, got ${JSON.stringify(auth.token_url)}` });
    }
  }
  const retries = isRecord(source.retries) ? source.retries : {};
  const minDelay = durationMs(typeof retries.min_delay === 'string' ? retries.min_delay : DEFINITION_DEFAULTS.retries.min_delay);
  const maxDelay = durationMs(typeof retries.max_delay === 'string' ? retries.max_delay : DEFINITION_DEFAULTS.retries.max_delay);
  if (minDelay !== undefined && maxDelay !== undefined && minDelay > maxDelay) {
    problems.push({ path: ['source', 'retries', 'min_delay'], message: `must not be longer than max_delay (${String(retries.max_delay ?? DEFINITION_DEFAULTS.retries.max_delay)})` });
  }
  return problems;
}

/** A db or warehouse source: its zone, and a connection URL that fits the client (the URL is a secret: never shown). */
function databaseSourceProblems(source: Record<string, unknown>, rawSource: Record<string, unknown>, usable: Usable): Problem[] {
  const problems: Problem[] = [];
  if (usable(['source', 'timezone'], source.timezone) && !IANAZone.isValidZone(source.timezone)) {
    problems.push({ path: ['source', 'timezone'], message: `unknown time zone ${JSON.stringify(source.timezone)}: use an IANA name such as Europe/Malta, or UTC` });
  }
  const client = source.client;
  // Both url and url_file, or neither: the schema says so, and url is not resolved.
  const given = Object.hasOwn(rawSource, 'url') !== Object.hasOwn(rawSource, 'url_file');
  if (given && typeof client === 'string' && Object.hasOwn(URL_SCHEMES, client) && usable(['source', 'url'], source.url)) {
    const reason = connectionUrlProblem(client as DbSource['client'], source.url);
    // The resolved value is always `url`; the file says which key it came from.
    const key = Object.hasOwn(rawSource, 'url') ? 'url' : 'url_file';
    if (reason !== undefined) problems.push({ path: ['source', key], message: reason });
  }
  return problems;
}

/** Why a connection URL does not fit its client, naming its scheme at most (the rest may hold a password). */
export function connectionUrlProblem(client: DbSource['client'], url: string): string | undefined {
  const schemes = URL_SCHEMES[client];
  const forms = client === 'sqlite' ? 'sqlite:path/to/file.sqlite' : schemes.map((s) => `${s}://`).join(' or ');
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  // Only a known scheme is named: in "user:password@host" the part before the colon is no scheme.
  const known = Object.values(URL_SCHEMES).flat();
  if (scheme === undefined || !known.includes(scheme)) return `must be a connection URL for client ${client} (${forms}); the value is a secret, not shown`;
  if (!schemes.includes(scheme)) return `the URL's scheme ${scheme}: does not fit client ${client}: use ${forms}`;
  if (client === 'sqlite') {
    return /^sqlite:(\/\/)?\S/i.test(url) ? undefined : 'a sqlite: URL needs a file path, e.g. sqlite:data/replica.sqlite';
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `is not a valid ${scheme}: URL (percent-encode special characters of the password, e.g. @ as %40); the value is a secret, not shown`;
  }
  if (parsed.hostname === '') return `a ${scheme}: URL needs a host, e.g. ${scheme}://user:password@host/db; the value is a secret, not shown`;
  return undefined;
}

/** A db stream: its query (one SELECT, known parameters) and its keyset columns. */
function dbStreamProblems(entity: Entity, stream: Record<string, unknown>, usable: Usable): Problem[] {
  const problems: Problem[] = [];
  const queryPath = ['streams', entity, 'query'];
  const query = stream.query;
  if (usable(queryPath, query)) {
    const scanned = scanQuery(query);
    for (const p of scanned.problems) problems.push({ path: queryPath, message: p.message, within: { text: query, offset: p.offset } });
    const allowed: readonly string[] = entity === 'activity' ? QUERY_PARAMETERS.daily : QUERY_PARAMETERS.cursor;
    const reported = new Set<string>();
    for (const { name, offset } of scanned.parameters) {
      if (allowed.includes(name) || reported.has(name)) continue;
      reported.add(name);
      problems.push({
        path: queryPath,
        message: `unknown parameter :${name}; a${entity === 'activity' ? 'n' : ''} ${entity} query may use ${allowed.map((a) => ':' + a).join(', ')}`,
        within: { text: query, offset },
      });
    }
    for (const { name, offset } of scanned.hidden) {
      if (!allowed.includes(name) || reported.has(`hidden ${name}`)) continue;
      reported.add(`hidden ${name}`);
      problems.push({ path: queryPath, message: `:${name} inside quotes or a comment would be bound there too (the binder does not see quotes): remove it`, within: { text: query, offset } });
    }
    const used = new Set(scanned.parameters.map((p) => p.name));
    const missing = allowed.filter((name) => !used.has(name));
    if (missing.length > 0) {
      const list = (names: readonly string[]): string => names.map((m) => ':' + m).join(', ');
      problems.push({
        path: queryPath,
        message:
          entity === 'activity'
            ? `must select the days read with :date_from and :date_to (UTC days, both included); missing ${list(missing)}`
            : `must filter, order and page itself with ${list(allowed)}: WHERE c >= :from AND c < :to AND c >= :cursor AND (c > :cursor OR (c = :cursor AND id > :id)) ORDER BY c, id LIMIT :limit; missing ${list(missing)}`,
      });
    }
  }
  if (entity !== 'activity' && typeof stream.cursor_column === 'string' && stream.cursor_column === stream.tiebreak_column) {
    problems.push({
      path: ['streams', entity, 'tiebreak_column'],
      message: 'must differ from cursor_column: a unique column (the primary key) orders the rows that share a cursor value',
    });
  }
  return problems;
}

