/**
 * `check`: a connector definition against its partner, before go-live and after changes: the
 * source is reachable and auth works, a database table or view has every mapped column with a
 * compatible type, each stream reads one page, and that page's records validate after mapping.
 */
import { createSource, type SourceDeps } from '../connectors/index.js';
import type { Source } from '../connectors/source.js';
import type { PartnerDefinition, StreamDefinition } from '../src/config/definition.js';
import { createMapper } from '../src/pipeline/map-record.js';
import type { Entity, RecordValidator } from '../src/types.js';
import { addDays, utcDay, type PullWindow } from './windows.js';

export interface StreamCheck {
  partner: string;
  stream: Entity;
  ok: boolean;
  records: number;
  invalid: number;
  detail: string;
}

const CHECK_BUDGET_MS = 60_000;

type CheckDeps = SourceDeps & { validator: RecordValidator; source?: typeof createSource };

async function checkStream(deps: CheckDeps, source: Source, def: PartnerDefinition, entity: Entity, stream: StreamDefinition, now: Date): Promise<StreamCheck> {
  const result = (ok: boolean, detail: string, records = 0, invalid = 0): StreamCheck => ({ partner: def.partner, stream: entity, ok, records, invalid, detail });
  const issues = source.inspect ? await source.inspect(stream) : [];
  if (issues.length > 0) return result(false, issues.join('; '));
  // A recent window: the last day of changes, or yesterday's activity.
  const yesterday = addDays(utcDay(now), -1);
  const asked: PullWindow = stream.incremental.mode === 'daily'
    ? { kind: 'days', from: yesterday, to: yesterday }
    : { kind: 'cursor', from: new Date(now.getTime() - 86_400_000).toISOString(), to: now.toISOString() };
  const window = source.bound ? await source.bound(stream, asked) : asked;
  let page: unknown[] = [];
  for await (const first of source.pages(stream, window)) {
    page = first;
    break;
  }
  const map = createMapper(def.variant, entity, stream.mapping, def.affiliates);
  const problems: string[] = [];
  page.forEach((raw, i) => {
    const mapped = map(raw);
    const errors = 'error' in mapped ? [mapped.error] : deps.validator.validate(def.variant, entity, mapped.record);
    if (errors.length > 0) problems.push(`record ${i + 1}: ${errors.map((e) => e.message).join('; ')}`);
  });
  const where = window.kind === 'days' ? window.from : 'the last 24 hours';
  const reached = def.source.type === 'rest' ? 'auth ok' : 'connected read-only, columns ok';
  if (page.length === 0) return result(true, `${reached}, first page of ${where} is empty`);
  if (problems.length === 0) return result(true, `${reached}, first page of ${where}: ${page.length} records, all valid after mapping`, page.length);
  return result(false, `${problems.length} of ${page.length} records on the first page of ${where} invalid after mapping; ${problems[0]}`, page.length, problems.length);
}

export async function checkPartner(deps: CheckDeps, def: PartnerDefinition): Promise<StreamCheck[]> {
  const now = deps.clock();
  const source = (deps.source ?? createSource)(def, { ...deps, deadline: now.getTime() + CHECK_BUDGET_MS });
  const checks: StreamCheck[] = [];
  try {
    for (const entity of ['customers', 'transactions', 'activity'] as const) {
      const stream = def.streams[entity];
      if (!stream) continue;
      try {
        checks.push(await checkStream(deps, source, def, entity, stream, now));
      } catch (error) {
        checks.push({ partner: def.partner, stream: entity, ok: false, records: 0, invalid: 0, detail: deps.redact((error as Error).message) });
      }
    }
  } finally {
    await source.close?.();
  }
  return checks;
}
