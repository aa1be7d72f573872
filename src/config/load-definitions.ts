/**
 * Loading the connector definitions of config/partners/*.yaml: parse (YAML, keeping positions),
 * validate against partner-definition.schema.json, resolve `${ENV}` references and secrets, check
 * what the schema cannot say (secure base URL, file name, mapping targets, cron, zones, connection
 * URL schemes, SQL queries), then apply the defaults and parse durations into the resolved
 * PartnerDefinition. Every error of every file is reported, each with the file, the key path and
 * the line.
 */
import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { isMap, isScalar, LineCounter, parse as parseYaml, parseDocument } from 'yaml';
import { isRecord, locate, position } from './yaml-position.js';
import type { PartnerDefinition } from './definition.js';
import { ENTITIES, type Entity } from '../types.js';
import { definitionSchema, schemaProblems } from './definition-schema.js';
import type { SchemaProblem } from './definition-schema.js';
import { resolveReferences } from './secrets.js';
import { build, type DefinitionInput } from './build-definition.js';
import { semanticProblems, type Within } from './definition-problems.js';
import { policyProblems } from '../spec/personal-data.js';

export { DEFINITION_DEFAULTS, QUERY_PARAMETERS, URL_SCHEMES } from './definition-defaults.js';
export { connectionUrlProblem, durationMs } from './definition-problems.js';
export { hasChangeColumn } from './build-definition.js';

export interface DefinitionError {
  /** The definition file, as found under the folder given. */
  file: string;
  /** Key path inside the file (`streams.customers.pagination.per_page`); '' for the file as a whole. */
  path: string;
  /** 1-based line and column of the key or value concerned, when known. */
  line?: number;
  column?: number;
  message: string;
}

export interface LoadedDefinitions {
  /** The valid definitions, by partner id. */
  definitions: PartnerDefinition[];
  /** Every error of every file; a file with errors yields no definition. */
  errors: DefinitionError[];
  /**
   * The files that exist and cannot load, one per partner that has no valid definition: its
   * streams are not pulled, which status and the freshness monitor must say (not "no definition").
   */
  invalid: InvalidDefinition[];
}

export interface InvalidDefinition {
  /** The partner id: the file's name without .yaml. */
  partner: string;
  file: string;
  /** The streams the file lists, as far as it could be read (none when its YAML does not parse). */
  streams: Entity[];
  errors: DefinitionError[];
}

export interface LoadedDefinition {
  definition?: PartnerDefinition;
  errors: DefinitionError[];
  /** For a file with errors: the streams it lists (entity names under `streams`), as far as it parses. */
  streams?: Entity[];
}

const DEFINITION_FILE = /\.ya?ml$/i;

/** `config/partners/acme.yaml: streams.customers.pagination.per_page (line 14): must be <= 500 (spec §4), got 1000` */
export function formatDefinitionError(error: DefinitionError): string {
  return `${error.file}: ${error.path === '' ? '(file)' : error.path}${error.line === undefined ? '' : ` (line ${error.line})`}: ${error.message}`;
}

/** Every `*.yaml` / `*.yml` definition in `dir` (other files are ignored). */
export async function loadDefinitions(dir: string, env: NodeJS.ProcessEnv): Promise<LoadedDefinitions> {
  let names: string[];
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    names = entries.filter((e) => (e.isFile() || e.isSymbolicLink()) && DEFINITION_FILE.test(e.name)).map((e) => e.name);
  } catch (error) {
    return { definitions: [], errors: [{ file: dir, path: '', message: `cannot read the definitions folder: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` }], invalid: [] };
  }
  names.sort();
  const definitions: PartnerDefinition[] = [];
  const errors: DefinitionError[] = [];
  const invalid: InvalidDefinition[] = [];
  const fileOf = new Map<string, string>();
  for (const name of names) {
    const file = join(dir, name);
    const result = await loadDefinition(file, env);
    errors.push(...result.errors);
    const id = stem(file);
    const other = fileOf.get(id);
    if (other !== undefined) {
      errors.push({ file, path: '', message: `partner ${id} is also defined in ${other}: one file per partner` });
      continue;
    }
    fileOf.set(id, file);
    if (result.definition !== undefined) definitions.push(result.definition);
    else invalid.push({ partner: id, file, streams: result.streams ?? [], errors: result.errors });
  }
  definitions.sort((a, b) => (a.partner < b.partner ? -1 : a.partner > b.partner ? 1 : 0));
  return { definitions, errors, invalid };
}

/**
 * One top-level value of a definition file read as plain YAML (no schema, no secrets): what a file
 * that does not load where it is read (its secrets live in the worker's environment) still states,
 * such as its variant or its personal-data policy. Undefined when the file or the key cannot be read.
 */
export function declaredValue(file: string, key: string): unknown {
  try {
    const doc = parseYaml(readFileSync(file, 'utf8')) as Record<string, unknown> | null;
    return doc !== null && typeof doc === 'object' ? doc[key] : undefined;
  } catch {
    return undefined;
  }
}

/** One definition file: the resolved definition, or every error found in it. */
export async function loadDefinition(file: string, env: NodeJS.ProcessEnv): Promise<LoadedDefinition> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    return { errors: [{ file, path: '', message: `cannot read the file: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` }] };
  }

  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    return {
      errors: doc.errors.map((e) => ({ file, path: '', ...position(lineCounter, e.pos[0]), message: `YAML syntax: ${e.message.split('\n')[0] ?? e.message}` })),
    };
  }
  const data: unknown = doc.toJS({ maxAliasCount: 100 });
  if (!isRecord(data)) {
    return { errors: [{ file, path: '', line: 1, column: 1, message: 'must be a mapping with the keys partner, variant, source and streams' }] };
  }

  const errors: DefinitionError[] = [];
  const report = (path: readonly string[], message: string, at: SchemaProblem['at'] = 'value', within?: Within): void => {
    const place = (within && locateWithin(doc.contents, lineCounter, text, path, within)) ?? locate(doc.contents, lineCounter, path, at);
    errors.push({ file, path: path.join('.'), ...place, message });
  };

  const { schema, validate } = definitionSchema();
  if (!validate(data)) for (const p of schemaProblems(validate.errors ?? [], schema)) report(p.path, p.message, p.at);

  const resolved = resolveReferences(data, { schema, env, baseDir: dirname(file) });
  for (const p of resolved.problems) report(p.path, p.message);

  const value = resolved.value as Record<string, unknown>;
  for (const p of semanticProblems(value, data, stem(file), resolved.unresolved)) report(p.path, p.message, p.at, p.within);

  for (const p of policyProblems(value.personal_data, env)) report(p.path.split('.'), p.message);

  if (errors.length > 0) return { errors: errors.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity)), streams: listedStreams(data) };
  return { definition: build(value as unknown as DefinitionInput, file, resolved.secrets, env), errors: [] };
}

/** The entity names under a definition's `streams`, in the spec's order. */
function listedStreams(data: Record<string, unknown>): Entity[] {
  const streams = data.streams;
  return isRecord(streams) ? ENTITIES.filter((e) => e in streams) : [];
}

function stem(file: string): string {
  return basename(file, extname(file));
}




/**
 * The line and column of a place inside a string value, when the value is written so that it can
 * be found: a literal block (`|`), or a plain or quoted scalar written on one line without escapes.
 * Undefined otherwise (the value's own position is used then).
 */
function locateWithin(root: unknown, lineCounter: LineCounter, source: string, path: readonly string[], within: Within): { line: number; column: number } | undefined {
  let node: unknown = root;
  for (const part of path) {
    if (!isMap(node)) return undefined;
    node = node.items.find((item) => String(isScalar(item.key) ? item.key.value : item.key) === part)?.value;
  }
  if (!isScalar(node) || node.value !== within.text || !node.range) return undefined;
  const { text, offset } = within;
  const [start, end] = node.range;
  if (node.type === 'BLOCK_LITERAL') {
    const before = text.slice(0, offset);
    const index = before.split('\n').length - 1;
    const line = lineCounter.linePos(start).line + 1 + index;
    const lineStart = lineCounter.lineStarts[line - 1];
    if (lineStart === undefined) return undefined;
    const written = source.slice(lineStart).split(/\r?\n/)[0] ?? '';
    const valueLine = text.split('\n')[index] ?? '';
    if (!written.endsWith(valueLine)) return undefined;
    return { line, column: written.length - valueLine.length + (offset - (before.lastIndexOf('\n') + 1)) + 1 };
  }
  const inner = node.type === 'PLAIN' ? source.slice(start, end) : node.type === 'QUOTE_SINGLE' || node.type === 'QUOTE_DOUBLE' ? source.slice(start + 1, end - 1) : undefined;
  if (inner !== text) return undefined;
  const { line, col } = lineCounter.linePos(start + (node.type === 'PLAIN' ? 0 : 1) + offset);
  return { line, column: col };
}
