/**
 * The fraud rules (config/fraud.yaml): per rule its thresholds and whether it runs, and per
 * partner overrides of any of them. Validated like config/commissions.yaml: YAML with positions,
 * a JSON Schema (built here from the rule table below, so the schema, the defaults and
 * docs/fraud.md name the same keys), every error with the file, the key path and the line; a file
 * with errors yields no rules.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { AnySchemaObject, ValidateFunction } from 'ajv/dist/2020.js';
import { LineCounter, parseDocument } from 'yaml';
import { schemaProblems, type SchemaProblem } from '../config/definition-schema.js';
import { isRecord, locate, position } from '../config/yaml-position.js';
import type { SchemaNode } from '../config/secrets.js';
import type { Variant } from '../types.js';

interface Param {
  type: 'integer' | 'number' | 'boolean';
  default: number | boolean;
  minimum?: number;
  maximum?: number;
  description: string;
}

/** Every rule, the variant it applies to and its parameters with their defaults (docs/fraud.md). */
export const RULES = {
  duplicate_identity: {
    variant: 'igaming',
    params: {
      min_accounts: { type: 'integer', default: 2, minimum: 2, description: 'customers sharing one identity key' },
      gmail_dots: { type: 'boolean', default: true, description: 'ignore dots in the local part of gmail.com / googlemail.com addresses' },
      name_key: { type: 'boolean', default: true, description: 'first + last name + country is an identity key (false where names are too common to tell people apart)' },
      name_max_accounts: { type: 'integer', default: 3, minimum: 2, description: 'a name + country carried by more customers is a common name, not one person: not flagged' },
      name_within_hours: { type: 'number', default: 24, minimum: 0, description: 'a shared name + country flags only when two of its customers signed up within this many hours of each other' },
      click_max_accounts: { type: 'integer', default: 5, minimum: 2, description: 'a click id carried by more customers is a tracker’s fault (an unfilled macro, a constant), not one click: not flagged' },
    },
  },
  cpa_farming: {
    variant: 'igaming',
    params: {
      baseline_usd: { type: 'number', default: 20, minimum: 0, description: 'the CPA baseline (the plan’s min_first_deposit_usd)' },
      margin: { type: 'number', default: 0.25, minimum: 0, description: 'a first deposit in [baseline, baseline × (1 + margin)] is at the baseline' },
      wagering_multiple: { type: 'number', default: 1, minimum: 0, description: 'wagering below this multiple of the first deposit is little play' },
      within_days: { type: 'integer', default: 7, minimum: 1, description: 'days from the first deposit’s day in which wagering counts' },
      min_ftds: { type: 'integer', default: 10, minimum: 1, description: 'an affiliate-month with fewer FTDs is not judged' },
      min_share: { type: 'number', default: 0.5, minimum: 0, maximum: 1, description: 'share of the affiliate-month’s FTDs that look farmed' },
    },
  },
  bonus_bust_out: {
    variant: 'igaming',
    params: {
      within_days: { type: 'integer', default: 3, minimum: 1, description: 'a withdrawal within this many days after the bonus' },
      wagering_multiple: { type: 'number', default: 3, minimum: 0, description: 'wagering between the bonus and the withdrawal below this multiple of the bonus' },
      min_bonus_out: { type: 'number', default: 0.5, minimum: 0, description: 'the withdrawal exceeds the net deposits before it by at least this share of the bonus (the bonus leaves)' },
    },
  },
  deposit_cycling: {
    variant: 'igaming',
    params: {
      within_days: { type: 'integer', default: 3, minimum: 0, description: 'a withdrawal within this many days after the deposit' },
      min_return_ratio: { type: 'number', default: 0.8, minimum: 0, description: 'the withdrawal is at least this share of the deposit' },
      wagering_multiple: { type: 'number', default: 0.5, minimum: 0, description: 'wagering from the deposit’s day to the withdrawal’s day below this multiple of the deposit' },
      min_cycles: { type: 'integer', default: 3, minimum: 1, description: 'cycles of one customer' },
      min_weight: { type: 'number', default: 1.8, minimum: 0, description: 'fewer cycles flag when they weigh this much, each weighing 1 − wagering ÷ (wagering_multiple × deposit): two round trips with almost no play' },
    },
  },
  chargeback_rate: {
    variant: 'igaming',
    params: {
      window_days: { type: 'integer', default: 30, minimum: 1, description: 'the rolling window' },
      max_rate: { type: 'number', default: 0.1, minimum: 0, maximum: 1, description: 'reversals and chargebacks per deposit above this rate' },
      min_deposits: { type: 'integer', default: 1, minimum: 1, description: 'a window with fewer deposits is not judged (1: every window, the confidence bound judges small samples)' },
      confidence_z: { type: 'number', default: 2.326, minimum: 0, description: 'the rate must be above max_rate at this confidence: the Wilson lower bound at z (2.326: 99% one-sided; 1.645: 95%; 0: the plain rate)' },
    },
  },
  ftd_spike: {
    variant: 'igaming',
    params: {
      history_days: { type: 'integer', default: 28, minimum: 1, description: 'the days before, whose mean is the affiliate’s own history' },
      min_history_days: { type: 'integer', default: 7, minimum: 1, description: 'an affiliate whose first FTD within history_days is fewer days back is not judged (too little history)' },
      multiple: { type: 'number', default: 5, minimum: 1, description: 'a day’s FTDs above this multiple of the history’s daily mean' },
      min_ftds: { type: 'integer', default: 10, minimum: 1, description: 'a day with fewer FTDs is not judged' },
    },
  },
  mirrored_pnl: {
    variant: 'prop-trading',
    params: {
      pnl_tolerance: { type: 'number', default: 0.05, minimum: 0, maximum: 1, description: '|pnl a + pnl b| at most this share of the larger |pnl|' },
      lots_tolerance: { type: 'number', default: 0.1, minimum: 0, maximum: 1, description: '|lots a − lots b| at most this share of the larger' },
      min_abs_pnl: { type: 'number', default: 100, minimum: 0, description: 'both |pnl| at least this (in the activity’s currency)' },
      min_days: { type: 'integer', default: 3, minimum: 1, description: 'mirrored days of one pair of accounts' },
      min_share: { type: 'number', default: 0.6, minimum: 0, maximum: 1, description: 'mirrored days at least this share of the days both accounts traded one same instrument' },
    },
  },
  copy_trading: {
    variant: 'prop-trading',
    params: {
      lots_tolerance: { type: 'number', default: 0.05, minimum: 0, maximum: 1, description: '|lots a − lots b| at most this share of the larger, per instrument' },
      pnl_tolerance: { type: 'number', default: 0.1, minimum: 0, maximum: 1, description: '|pnl a − pnl b| at most this share of the larger |pnl|, per instrument' },
      min_days: { type: 'integer', default: 3, minimum: 2, description: 'identical days of one pair of accounts' },
    },
  },
  fast_funding: {
    variant: 'prop-trading',
    params: {
      max_days: { type: 'number', default: 7, minimum: 0, description: 'funded less than this many days after signup' },
    },
  },
  refund_after_fee: {
    variant: 'prop-trading',
    params: {
      min_refunds: { type: 'integer', default: 4, minimum: 2, description: 'refunds after a challenge fee among one affiliate’s customers in one calendar month' },
      max_rate: { type: 'number', default: 0.2, minimum: 0, maximum: 1, description: 'those refunds above this share of the challenge fees its customers paid that month' },
    },
  },
} as const satisfies Record<string, { variant: Variant; params: Record<string, Param> }>;

export type RuleName = keyof typeof RULES;
export const RULE_NAMES = Object.keys(RULES) as RuleName[];

type ParamsOf<R extends RuleName> = { -readonly [K in keyof (typeof RULES)[R]['params']]: (typeof RULES)[R]['params'][K] extends { type: 'boolean' } ? boolean : number };
/** A rule's settings in force for one partner. */
export type RuleSettings = { [R in RuleName]: ParamsOf<R> & { enabled: boolean } };

export interface FraudConfig {
  rules: RuleSettings;
  partners: Record<string, { [R in RuleName]?: Partial<RuleSettings[R]> }>;
}

export interface FraudConfigError {
  file: string;
  path: string;
  line?: number;
  column?: number;
  message: string;
}

export function defaultSettings(): RuleSettings {
  const out: Record<string, Record<string, number | boolean>> = {};
  for (const name of RULE_NAMES) {
    const params: Record<string, number | boolean> = { enabled: true };
    for (const [key, p] of Object.entries(RULES[name].params) as [string, Param][]) params[key] = p.default;
    out[name] = params;
  }
  return out as unknown as RuleSettings;
}

export function defaultConfig(): FraudConfig {
  return { rules: defaultSettings(), partners: {} };
}

/** The settings in force for a partner: the rules, with the partner's overrides on top. */
export function settingsFor(config: FraudConfig, partner: string): RuleSettings {
  const over = config.partners[partner] ?? {};
  const out = {} as Record<string, unknown>;
  for (const name of RULE_NAMES) out[name] = { ...config.rules[name], ...(over[name] ?? {}) };
  return out as RuleSettings;
}

/** Rules that run for a partner of this variant. */
export function enabledRules(settings: RuleSettings, variant: Variant): RuleName[] {
  return RULE_NAMES.filter((r) => RULES[r].variant === variant && settings[r].enabled);
}

export function fraudSchema(): AnySchemaObject & SchemaNode {
  const defs: Record<string, unknown> = {};
  for (const name of RULE_NAMES) {
    const properties: Record<string, unknown> = { enabled: { type: 'boolean', description: 'false: the rule does not run' } };
    for (const [key, p] of Object.entries(RULES[name].params) as [string, Param][]) {
      properties[key] = { type: p.type, description: `${p.description} (default ${String(p.default)})`, ...(p.minimum === undefined ? {} : { minimum: p.minimum }), ...(p.maximum === undefined ? {} : { maximum: p.maximum }) };
    }
    defs[name] = { type: 'object', additionalProperties: false, description: `${name} (${RULES[name].variant})`, properties };
  }
  const ruleSet = { type: 'object', additionalProperties: false, properties: Object.fromEntries(RULE_NAMES.map((r) => [r, { $ref: `#/$defs/${r}` }])) };
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'partner-sync fraud rules (config/fraud.yaml)',
    type: 'object',
    additionalProperties: false,
    properties: {
      rules: { ...ruleSet, description: 'thresholds of every rule; a rule left out keeps its defaults' },
      partners: { type: 'object', description: 'per partner id: overrides of the rules for that partner', additionalProperties: ruleSet },
    },
    $defs: defs,
  } as AnySchemaObject & SchemaNode;
}

let compiled: ValidateFunction | undefined;
function validator(): ValidateFunction {
  // validateSchema off: the shipped schema is checked against the meta-schema by test/spec/meta-schemas.test.ts, not at every start.
  if (!compiled) compiled = new Ajv2020({ allErrors: true, strict: true, verbose: true, validateSchema: false }).compile(fraudSchema());
  return compiled;
}

export function formatFraudConfigError(e: FraudConfigError): string {
  return `${e.file}: ${e.path === '' ? '(file)' : e.path}${e.line === undefined ? '' : ` (line ${e.line})`}: ${e.message}`;
}

/** Validates fraud rules given as YAML text (`file` names it in errors). */
export function parseFraudConfig(text: string, file: string): { config?: FraudConfig; errors: FraudConfigError[] } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    return { errors: doc.errors.map((e) => ({ file, path: '', ...position(lineCounter, e.pos[0]), message: `YAML syntax: ${e.message.split('\n')[0] ?? e.message}` })) };
  }
  const data: unknown = doc.toJS({ maxAliasCount: 100 }) ?? {};
  if (!isRecord(data)) return { errors: [{ file, path: '', line: 1, column: 1, message: 'must be a mapping with the keys rules and partners' }] };
  const validate = validator();
  if (!validate(data)) {
    const errors = schemaProblems(validate.errors ?? [], fraudSchema()).map((p: SchemaProblem): FraudConfigError => {
      const parts = p.path.map(String);
      return { file, path: parts.join('.'), ...locate(doc.contents, lineCounter, parts, p.at), message: p.message };
    });
    return { errors: errors.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity)) };
  }
  const input = data as { rules?: Record<string, Record<string, unknown>>; partners?: FraudConfig['partners'] };
  const rules = defaultSettings() as unknown as Record<string, Record<string, unknown>>;
  for (const [name, values] of Object.entries(input.rules ?? {})) rules[name] = { ...rules[name], ...values };
  return { config: { rules: rules as unknown as RuleSettings, partners: input.partners ?? {} }, errors: [] };
}

/** Reads `file`; an absent file means no fraud detection (undefined, no errors). */
export async function loadFraudConfig(file: string): Promise<{ config?: FraudConfig; errors: FraudConfigError[] }> {
  if (!existsSync(file)) return { errors: [] };
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    return { errors: [{ file, path: '', message: `cannot read the file: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` }] };
  }
  return parseFraudConfig(text, file);
}
