/**
 * `check`: a connector definition against its partner, before go-live and after changes: the
 * source is reachable and auth works, a database table or view has every mapped column with a
 * compatible type, and each stream's sample (the first page of windows spread over the history)
 * validates after mapping; what would be rejected is reported per field and rule with example keys.
 */
import { createSource, type SourceDeps } from '../connectors/index.js';
import type { Source } from '../connectors/source.js';
import type { PartnerDefinition, StreamDefinition } from '../src/config/definition.js';
import { definitionTodos, todosOf, type DefinitionTodo } from '../src/config/definition-todos.js';
import { createMapper } from '../src/pipeline/map-record.js';
import { entityTable } from '../src/store/tables.js';
import type { Entity, RecordValidator, Violation } from '../src/types.js';
import { utcDay } from './windows.js';
import { addDays } from '../src/kernel/dates.js';
import type { PullWindow } from '../connectors/source.js';

export interface StreamCheck {
  partner: string;
  stream: Entity;
  ok: boolean;
  records: number;
  invalid: number;
  detail: string;
  /** The windows sampled (the first page of each), and what the sample would reject, per field and rule. */
  sampled?: string[];
  rejects?: SampleRejects[];
  /** `# TODO:` comments left in the definition for this stream (its block, and the source's): check fails until they are resolved. */
  todos?: DefinitionTodo[];
}

const CHECK_BUDGET_MS = 60_000;

type CheckDeps = SourceDeps & {
  validator: RecordValidator;
  source?: typeof createSource;
  /** Whether TODOs left in the definition file fail the check (default true; `init` lists them itself). */
  todos?: boolean;
};

/** A stream's check, failed when TODOs of the draft are left for it. */
function withTodos(check: StreamCheck, todos: readonly DefinitionTodo[], file: string): StreamCheck {
  if (todos.length === 0) return check;
  const list = todos.map((t) => `line ${t.line}: ${t.text}`).join('; ');
  return { ...check, ok: false, todos: [...todos], detail: `${check.detail}; ${todos.length} TODO(s) of the draft left in ${file} (${list}): confirm or fix each, then delete its line` };
}

async function checkStream(deps: CheckDeps, source: Source, def: PartnerDefinition, entity: Entity, stream: StreamDefinition, now: Date): Promise<StreamCheck> {
  const result = (ok: boolean, detail: string, records = 0, invalid = 0): StreamCheck => ({ partner: def.partner, stream: entity, ok, records, invalid, detail });
  const issues = source.inspect ? await source.inspect(stream) : [];
  if (issues.length > 0) return result(false, issues.join('; '));
  const sample = await readSample(source, stream, now);
  const found = judgeSample(deps, def, entity, stream, sample.records);
  const reached = def.source.type === 'rest' ? 'auth ok' : 'connected read-only, columns ok';
  const where = `the first page of ${sample.windows.length} windows over the last ${SAMPLE_DAYS.at(-1)} days (${sample.windows.join(', ')})`;
  const n = sample.records.length;
  if (n === 0) return { ...result(true, `${reached}, ${where}: empty`), sampled: sample.windows, rejects: [] };
  if (found.invalid === 0) return { ...result(true, `${reached}, ${where}: ${n} records, all valid after mapping`, n), sampled: sample.windows, rejects: [] };
  const rules = found.rejects.map((r) => `${r.field} ${r.rule}: ${r.count} (e.g. ${r.examples.join(', ')})`).join('; ');
  return { ...result(false, `${found.invalid} of ${n} sampled records would be rejected after mapping (${where}): ${rules}; first: ${found.first}`, n, found.invalid), sampled: sample.windows, rejects: found.rejects };
}

/** Days back from now where `check` reads a window's first page: the newest, then older parts of the history. */
const SAMPLE_DAYS = [1, 30, 90] as const;

/**
 * The sample `check` maps: the first page of windows spread over the history (the last day, a
 * month ago, three months ago), so that codes, currencies and forms used only in older data are
 * seen before a backfill meets them.
 */
async function readSample(source: Source, stream: StreamDefinition, now: Date): Promise<{ records: unknown[]; windows: string[] }> {
  const records: unknown[] = [];
  const windows: string[] = [];
  for (const back of SAMPLE_DAYS) {
    const day = addDays(utcDay(now), -back);
    const asked: PullWindow = stream.incremental.mode === 'daily'
      ? { kind: 'days', from: day, to: day }
      : { kind: 'cursor', from: new Date(now.getTime() - back * 86_400_000).toISOString(), to: new Date(now.getTime() - (back - 1) * 86_400_000).toISOString() };
    const window = source.bound ? await source.bound(stream, asked) : asked;
    if (window.kind === 'cursor' && window.from >= window.to) continue;
    windows.push(window.kind === 'days' ? window.from : back === 1 ? 'the last 24 hours' : `${back} days ago`);
    for await (const first of source.pages(stream, window)) {
      records.push(...first);
      break;
    }
  }
  return { records, windows };
}

export interface SampleRejects {
  field: string;
  rule: string;
  count: number;
  /** Up to three keys of the records (or their positions in the sample). */
  examples: string[];
}

/** A raw value outside a field's code `map`: a failure of `check` (the map was built from too few values). */
function outsideMaps(stream: StreamDefinition, raw: unknown): Violation[] {
  const out: Violation[] = [];
  for (const [field, rule] of Object.entries(stream.mapping.fields)) {
    if (typeof rule !== 'object' || rule.map === undefined) continue;
    let value: unknown = raw;
    for (const part of (rule.from ?? field).split('.')) value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[part] : undefined;
    if (value === undefined || value === null) continue;
    if (!Object.prototype.hasOwnProperty.call(rule.map, String(value))) out.push({ field, rule: 'map', message: `${field}: the source's value ${JSON.stringify(value)} is not in the map (${Object.keys(rule.map).join(', ')}): unmapped values would pass unchanged` });
  }
  return out;
}

/** The sample mapped and validated as the loader does it (map-record, the spec validator): what would be rejected, per field and rule. */
function judgeSample(deps: CheckDeps, def: PartnerDefinition, entity: Entity, stream: StreamDefinition, records: unknown[]): { invalid: number; rejects: SampleRejects[]; first: string } {
  const map = createMapper(def.variant, entity, stream.mapping, def.affiliates);
  const keyFields = entityTable(def.variant, entity).key;
  const byRule = new Map<string, SampleRejects>();
  let invalid = 0;
  let first = '';
  records.forEach((raw, i) => {
    const mapped = map(raw);
    const errors = 'error' in mapped ? [mapped.error] : [...deps.validator.validate(def.variant, entity, mapped.record), ...outsideMaps(stream, raw)];
    if (errors.length === 0) return;
    invalid += 1;
    const key = 'record' in mapped && keyFields.every((k) => mapped.record[k] !== undefined) ? keyFields.map((k) => String(mapped.record[k])).join('|') : `record ${i + 1}`;
    if (first === '') first = `${key}: ${errors.map((e) => e.message).join('; ')}`;
    for (const e of errors) {
      const id = `${e.field} ${e.rule}`;
      const entry = byRule.get(id) ?? { field: e.field, rule: e.rule, count: 0, examples: [] };
      byRule.set(id, entry);
      entry.count += 1;
      if (entry.examples.length < 3) entry.examples.push(key);
    }
  });
  return { invalid, rejects: [...byRule.values()].sort((a, b) => b.count - a.count), first };
}

export async function checkPartner(deps: CheckDeps, def: PartnerDefinition): Promise<StreamCheck[]> {
  const now = deps.clock();
  const source = (deps.source ?? createSource)(def, { ...deps, deadline: now.getTime() + CHECK_BUDGET_MS });
  const checks: StreamCheck[] = [];
  const todos = deps.todos === false ? [] : definitionTodos(def.file);
  try {
    for (const entity of ['customers', 'transactions', 'activity'] as const) {
      const stream = def.streams[entity];
      if (!stream) continue;
      try {
        checks.push(withTodos(await checkStream(deps, source, def, entity, stream, now), todosOf(todos, entity), def.file));
      } catch (error) {
        checks.push({ partner: def.partner, stream: entity, ok: false, records: 0, invalid: 0, detail: deps.redact((error as Error).message) });
      }
    }
  } finally {
    await source.close?.();
  }
  return checks;
}
