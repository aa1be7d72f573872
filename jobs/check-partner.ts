/**
 * `check`: a connector definition against its partner, before go-live and after changes: auth
 * works, each stream reads one page, and that page's records validate after mapping.
 */
import { createSource, type SourceDeps } from '../connectors/index.js';
import type { PartnerDefinition } from '../src/config/definition.js';
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

export async function checkPartner(deps: SourceDeps & { validator: RecordValidator; source?: typeof createSource }, def: PartnerDefinition): Promise<StreamCheck[]> {
  const now = deps.clock();
  const source = (deps.source ?? createSource)(def, { ...deps, deadline: now.getTime() + CHECK_BUDGET_MS });
  const checks: StreamCheck[] = [];
  for (const entity of ['customers', 'transactions', 'activity'] as const) {
    const stream = def.streams[entity];
    if (!stream) continue;
    // A recent window: the last day of changes, or yesterday's activity.
    const window: PullWindow = stream.incremental.mode === 'daily'
      ? { kind: 'days', from: addDays(utcDay(now), -1), to: addDays(utcDay(now), -1) }
      : { kind: 'cursor', from: new Date(now.getTime() - 86_400_000).toISOString(), to: now.toISOString() };
    const map = createMapper(def.variant, entity, stream.mapping, def.affiliates);
    try {
      let page: unknown[] = [];
      const bounded = source.bound ? await source.bound(stream, window) : window;
      for await (const first of source.pages(stream, bounded)) {
        page = first;
        break;
      }
      const problems: string[] = [];
      page.forEach((raw, i) => {
        const mapped = map(raw);
        const errors = 'error' in mapped ? [mapped.error] : deps.validator.validate(def.variant, entity, mapped.record);
        if (errors.length > 0) problems.push(`record ${i + 1}: ${errors.map((e) => e.message).join('; ')}`);
      });
      const where = window.kind === 'days' ? window.from : 'the last 24 hours';
      checks.push({
        partner: def.partner, stream: entity, ok: problems.length === 0, records: page.length, invalid: problems.length,
        detail: page.length === 0
          ? `auth ok, first page of ${where} is empty`
          : problems.length === 0
            ? `auth ok, first page of ${where}: ${page.length} records, all valid after mapping`
            : `${problems.length} of ${page.length} records on the first page of ${where} invalid after mapping; ${problems[0]}`,
      });
    } catch (error) {
      checks.push({ partner: def.partner, stream: entity, ok: false, records: 0, invalid: 0, detail: deps.redact((error as Error).message) });
    }
  }
  return checks;
}
