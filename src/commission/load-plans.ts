/**
 * Loading config/commissions.yaml like a connector definition: YAML with positions, the JSON
 * Schema (commissions.schema.json, ajv) with the same readable messages, then the checks a schema
 * cannot make (unique ids, date order, whole months for RevShare, ascending bands, overlapping
 * plans). Every error is reported with the file, the key path and the line; a file with errors
 * yields no plans.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { AnySchemaObject, ValidateFunction } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { LineCounter, parseDocument } from 'yaml';
import { isRecord, locate, position } from '../config/yaml-position.js';
import { schemaProblems, type SchemaProblem } from '../config/definition-schema.js';
import type { SchemaNode } from '../config/secrets.js';
import { packageRoot } from '../paths.js';
import { isDay, lastDayOf, monthOf } from '../kernel/dates.js';
import { money, type Money } from '../kernel/money.js';
import {
  CLAWBACK_DEFAULTS, DEFAULT_CLOSE_AFTER_HOURS, DEFAULT_FUNNEL,
  type Band, type Plan, type RateRule,
} from './plans.js';

export interface PlanError {
  file: string;
  /** Key path in the file (`plans.2.tiers.bands.1.from_usd`); '' for the file as a whole. */
  path: string;
  line?: number;
  column?: number;
  message: string;
}

export interface LoadedPlans {
  plans: Plan[];
  errors: PlanError[];
}

/** `config/commissions.yaml: plans.1.tiers.mode (line 12): must be one of tiered, ladder, got "step"` */
export function formatPlanError(error: PlanError): string {
  return `${error.file}: ${error.path === '' ? '(file)' : error.path}${error.line === undefined ? '' : ` (line ${error.line})`}: ${error.message}`;
}

export function plansSchemaFile(): string {
  return join(packageRoot(), 'src', 'commission', 'commissions.schema.json');
}

const addFormats = ajvFormats.default;
let compiled: { schema: AnySchemaObject & SchemaNode; validate: ValidateFunction } | undefined;

function plansSchema(): { schema: AnySchemaObject & SchemaNode; validate: ValidateFunction } {
  if (compiled) return compiled;
  const schema = JSON.parse(readFileSync(plansSchemaFile(), 'utf8')) as AnySchemaObject & SchemaNode;
  // validateSchema off: the shipped schema is checked against the meta-schema by test/spec/meta-schemas.test.ts, not at every start.
  const ajv = new Ajv2020({ allErrors: true, strict: true, verbose: true, discriminator: true, allowUnionTypes: true, validateSchema: false });
  addFormats(ajv, { mode: 'full', formats: ['date'], keywords: false });
  ajv.addKeyword({ keyword: 'x-error' });
  compiled = { schema, validate: ajv.compile(schema) };
  return compiled;
}

/** Reads and validates the plans file. A missing file is an error here; callers that allow none check first. */
export async function loadPlans(file: string): Promise<LoadedPlans> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    return { plans: [], errors: [{ file, path: '', message: `cannot read the file: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` }] };
  }
  return parsePlans(text, file);
}

/** Validates plans given as YAML text (`file` names it in errors). */
export function parsePlans(text: string, file: string): LoadedPlans {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    return {
      plans: [],
      errors: doc.errors.map((e) => ({ file, path: '', ...position(lineCounter, e.pos[0]), message: `YAML syntax: ${e.message.split('\n')[0] ?? e.message}` })),
    };
  }
  const data: unknown = doc.toJS({ maxAliasCount: 100 });
  if (!isRecord(data)) return { plans: [], errors: [{ file, path: '', line: 1, column: 1, message: 'must be a mapping with the key plans (a list of plans)' }] };

  const errors: PlanError[] = [];
  const report = (path: readonly (string | number)[], message: string, at: SchemaProblem['at'] = 'value'): void => {
    const parts = path.map(String);
    errors.push({ file, path: parts.join('.'), ...locate(doc.contents, lineCounter, parts, at), message });
  };
  const { schema, validate } = plansSchema();
  if (!validate(data)) for (const p of schemaProblems(validate.errors ?? [], schema)) report(p.path, p.message, p.at);
  if (errors.length === 0) semanticChecks(data as unknown as PlansInput, report);
  if (errors.length > 0) return { plans: [], errors: errors.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity)) };
  return { plans: (data as unknown as PlansInput).plans.map(build), errors: [] };
}

type Usd = number | string;
interface PlanInputBase {
  id: string;
  partner: string;
  affiliates: 'all' | string[];
  effective: { from: string; to?: string };
}
type PlanInput =
  | (PlanInputBase & {
    kind: 'cpa_ftd';
    qualification?: { window_days?: number; min_first_deposit_usd?: Usd; cumulative_deposits?: { min_usd: Usd; within_days: number }; wagering?: { min_usd: Usd; within_days: number } };
    amount_usd: { default: Usd; by_country?: Record<string, Usd> };
    clawback?: { window_days?: number; reversal_statuses?: string[]; chargeback_subtypes?: string[] };
  })
  | (PlanInputBase & {
    kind: 'revshare';
    revenue: 'ggr' | 'ngr';
    tiers: { mode: 'tiered' | 'ladder'; bands: { from_usd: Usd; rate: Usd }[] };
    negative_carryover?: boolean;
    close_after_hours?: number;
  })
  | (PlanInputBase & {
    kind: 'challenge_cpa';
    include_reset_fee?: boolean;
    rates: { challenge_type?: string[]; account_size?: { min_usd?: Usd; below_usd?: Usd }; rate: Usd }[];
  })
  | (PlanInputBase & { kind: 'phase_bonus'; phase: string; funnel?: string[]; amount_usd: Usd });
interface PlansInput {
  plans: PlanInput[];
}

type Report = (path: readonly (string | number)[], message: string, at?: SchemaProblem['at']) => void;

/** At most 15 significant digits, like every amount of the spec (§8): more cannot be meant exactly. */
function amountProblem(value: Usd): string | undefined {
  const digits = money(value).precision(true);
  return digits > 15 ? `has ${digits} significant digits; at most 15 (write it as a decimal string if it is exact)` : undefined;
}

function semanticChecks(input: PlansInput, report: Report): void {
  const ids = new Map<string, number>();
  input.plans.forEach((plan, i) => {
    const at = (...rest: (string | number)[]) => ['plans', i, ...rest];
    const other = ids.get(plan.id);
    if (other !== undefined) report(at('id'), `plan id ${JSON.stringify(plan.id)} is also used by plans.${other}: ids name ledger lines and must be unique`);
    else ids.set(plan.id, i);
    const { from, to } = plan.effective;
    for (const [key, day] of [['from', from], ['to', to]] as const) {
      if (day !== undefined && !isDay(day)) report(at('effective', key), `must be a real calendar day, got ${JSON.stringify(day)}`);
    }
    if (to !== undefined && to < from) report(at('effective', 'to'), `must not be before effective.from (${from}), got ${to}`);

    const checkAmount = (path: (string | number)[], value: Usd | undefined) => {
      if (value === undefined) return;
      const problem = amountProblem(value);
      if (problem) report(at(...path), problem);
    };
    switch (plan.kind) {
      case 'cpa_ftd': {
        const q = plan.qualification ?? {};
        checkAmount(['qualification', 'min_first_deposit_usd'], q.min_first_deposit_usd);
        checkAmount(['qualification', 'cumulative_deposits', 'min_usd'], q.cumulative_deposits?.min_usd);
        checkAmount(['qualification', 'wagering', 'min_usd'], q.wagering?.min_usd);
        checkAmount(['amount_usd', 'default'], plan.amount_usd.default);
        for (const [country, value] of Object.entries(plan.amount_usd.by_country ?? {})) checkAmount(['amount_usd', 'by_country', country], value);
        break;
      }
      case 'revshare': {
        if (from.slice(8) !== '01') report(at('effective', 'from'), `a RevShare plan runs in whole calendar months: must be the first day of a month, got ${from}`);
        if (to !== undefined && isDay(to) && to !== lastDayOf(monthOf(to))) {
          report(at('effective', 'to'), `a RevShare plan runs in whole calendar months: must be the last day of a month (${lastDayOf(monthOf(to))}), got ${to}`);
        }
        const bands = plan.tiers.bands;
        bands.forEach((band, b) => checkAmount(['tiers', 'bands', b, 'from_usd'], band.from_usd));
        if (bands[0] !== undefined && !money(bands[0].from_usd).isZero()) report(at('tiers', 'bands', 0, 'from_usd'), `the first band must start at 0, got ${String(bands[0].from_usd)}`);
        for (let b = 1; b < bands.length; b++) {
          const prev = bands[b - 1];
          const band = bands[b];
          if (prev && band && !money(band.from_usd).greaterThan(money(prev.from_usd))) {
            report(at('tiers', 'bands', b, 'from_usd'), `bands must ascend: must be more than the previous band's from_usd (${String(prev.from_usd)}), got ${String(band.from_usd)}`);
          }
        }
        break;
      }
      case 'challenge_cpa':
        plan.rates.forEach((rule, r) => {
          checkAmount(['rates', r, 'account_size', 'min_usd'], rule.account_size?.min_usd);
          checkAmount(['rates', r, 'account_size', 'below_usd'], rule.account_size?.below_usd);
          const { min_usd, below_usd } = rule.account_size ?? {};
          if (min_usd !== undefined && below_usd !== undefined && !money(below_usd).greaterThan(money(min_usd))) {
            report(at('rates', r, 'account_size', 'below_usd'), `must be more than min_usd (${String(min_usd)}), got ${String(below_usd)}`);
          }
        });
        break;
      case 'phase_bonus':
        checkAmount(['amount_usd'], plan.amount_usd);
        if (plan.funnel !== undefined && !plan.funnel.includes(plan.phase)) {
          report(at('funnel'), `must include the plan's phase ${JSON.stringify(plan.phase)}, got ${plan.funnel.join(', ')}`);
        }
        break;
    }
  });

  // Two plans of one kind for the same partner, affiliate and day would pay the same thing twice.
  for (let i = 0; i < input.plans.length; i++) {
    for (let j = 0; j < i; j++) {
      const a = input.plans[i] as PlanInput;
      const b = input.plans[j] as PlanInput;
      if (a.kind !== b.kind || a.partner !== b.partner) continue;
      if (a.kind === 'phase_bonus' && b.kind === 'phase_bonus' && a.phase !== b.phase) continue;
      if ([a, b].some((p) => p.effective.to !== undefined && p.effective.to < p.effective.from)) continue; // reported above
      const overlapDays = (a.effective.to ?? '9999-12-31') >= b.effective.from && (b.effective.to ?? '9999-12-31') >= a.effective.from;
      const shared = a.affiliates === 'all' ? (b.affiliates === 'all' ? ['all'] : b.affiliates)
        : b.affiliates === 'all' ? a.affiliates : a.affiliates.filter((x) => (b.affiliates as string[]).includes(x));
      if (overlapDays && shared.length > 0) {
        report(['plans', i, 'effective'],
          `overlaps plan ${b.id} (plans.${j}): both are ${a.kind} plans of partner ${a.partner} for ${shared[0] === 'all' ? 'all affiliates' : `affiliate ${shared.slice(0, 3).join(', ')}`} on the same days; end one (effective.to) before the other starts`);
      }
    }
  }
}

function build(input: PlanInput): Plan {
  const base = {
    id: input.id,
    partner: input.partner,
    affiliates: input.affiliates === 'all' ? ('all' as const) : new Set(input.affiliates),
    from: input.effective.from,
    to: input.effective.to ?? null,
  };
  const opt = (value: Usd | undefined): Money | null => (value === undefined ? null : money(value));
  switch (input.kind) {
    case 'cpa_ftd': {
      const q = input.qualification ?? {};
      return {
        ...base,
        kind: 'cpa_ftd',
        windowDays: q.window_days ?? null,
        minFirstDepositUsd: opt(q.min_first_deposit_usd),
        cumulative: q.cumulative_deposits ? { minUsd: money(q.cumulative_deposits.min_usd), days: q.cumulative_deposits.within_days } : null,
        wagering: q.wagering ? { minUsd: money(q.wagering.min_usd), days: q.wagering.within_days } : null,
        amountUsd: {
          default: money(input.amount_usd.default),
          byCountry: new Map(Object.entries(input.amount_usd.by_country ?? {}).map(([c, v]) => [c, money(v)])),
        },
        clawback: {
          days: input.clawback?.window_days ?? CLAWBACK_DEFAULTS.days,
          reversalStatuses: input.clawback?.reversal_statuses ?? [...CLAWBACK_DEFAULTS.reversalStatuses],
          chargebackSubtypes: input.clawback?.chargeback_subtypes ?? [...CLAWBACK_DEFAULTS.chargebackSubtypes],
        },
      };
    }
    case 'revshare':
      return {
        ...base,
        kind: 'revshare',
        revenue: input.revenue,
        tiers: { mode: input.tiers.mode, bands: input.tiers.bands.map((b): Band => ({ fromUsd: money(b.from_usd), rate: money(b.rate) })) },
        carryover: input.negative_carryover ?? false,
        closeAfterHours: input.close_after_hours ?? DEFAULT_CLOSE_AFTER_HOURS,
      };
    case 'challenge_cpa':
      return {
        ...base,
        kind: 'challenge_cpa',
        includeResetFee: input.include_reset_fee ?? false,
        rates: input.rates.map((r): RateRule => ({
          challengeTypes: r.challenge_type ? new Set(r.challenge_type) : null,
          minAccountUsd: opt(r.account_size?.min_usd),
          belowAccountUsd: opt(r.account_size?.below_usd),
          rate: money(r.rate),
        })),
      };
    case 'phase_bonus':
      return { ...base, kind: 'phase_bonus', phase: input.phase, funnel: input.funnel ?? [...DEFAULT_FUNNEL], amountUsd: money(input.amount_usd) };
  }
}



