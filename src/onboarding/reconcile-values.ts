/**
 * Reconcile's check of values, apart from the definition: a store loaded through a wrong
 * definition (a constant currency where the partner's money is EUR, a status code mapped to the
 * wrong word, cents read as units, local times read as UTC) agrees with the same definition read
 * again, so the definition's mapping cannot be the judge. Here the source's own values are read by
 * what the source itself says about them:
 *
 * - currency: the column the definition reads it from (its raw ISO code, before any map or
 *   constant), else a currency column of the source (`currency`, `ccy`, `cur`...), else a code in
 *   the amount column's name (`amount_eur`);
 * - codes (status, transaction_type, kyc_status_id, phase): a raw code that names a spec value word
 *   for word (`SETTLED`, `Approved`, `D`); numeric codes say nothing and are not judged;
 * - amounts: a column whose name says its unit (`amt_minor`, `*_cents`, `size_k`);
 * - instants (REST): text with its own offset or `Z`, and epoch numbers.
 *
 * A seeded random sample of the records read (`sample`, `seed`: the same seed draws the same
 * records from the same source) is compared field by field with the store; a field the source
 * says nothing independent about is not judged here (the definition's mapping of every record is
 * compared with the store by reconcile itself). The same readings group the source's counts and
 * sums per day, currency, status and type (by SQL on a database, over the pages for REST) beside
 * the store's groups.
 */
import { Decimal } from 'decimal.js';
import type { FieldRule, PartnerDefinition, StreamDefinition } from '../config/definition.js';
import { mulberry32 } from '../kernel/prng.js';
import { createMapper } from '../pipeline/map-record.js';
import { applied, isPersonalField, minimises } from '../spec/personal-data.js';
import { entityTable } from '../store/tables.js';
import type { Entity, SpecRecord, Variant } from '../types.js';
import { MINOR_NAME } from './profile.js';
import { CURRENCY_CODE } from './propose-fields.js';
import { DAY_FIELD, sourceGroups, type AggregateDeps } from './source-aggregates.js';
import { CURRENCY_NAMES, THOUSANDS_NAME, norm, specValues, wordValue } from './vocabulary.js';

export const DEFAULT_SAMPLE = 200;

/** The amount fields summed per group, per variant and entity. */
export const GROUP_AMOUNTS: Record<Variant, Partial<Record<Entity, string[]>>> = {
  igaming: { transactions: ['amount_currency'], activity: ['total_bets', 'wins', 'ggr', 'ngr'] },
  'prop-trading': { customers: ['account_size'], transactions: ['amount_currency'], activity: ['pnl', 'lots_traded'] },
};

const CODE_FIELDS = ['status', 'transaction_type', 'kyc_status_id', 'phase'];
const AMOUNT_FIELDS = ['amount_currency', 'total_bets', 'wins', 'ggr', 'ngr', 'pnl', 'lots_traded', 'account_size', 'drawdown', 'max_drawdown'];
const ISO_CODE = /^\s*[A-Za-z]{3}\s*$/;
const OFFSET_TEXT = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?\s*([Zz]|[+-]\d{2}(:?\d{2})?)$/;

/** One field as the source says it, apart from the definition's rule for it. */
export interface Reading {
  field: string;
  /** What the reading rests on, for the report (`column ccy`, `the name amount_eur`). */
  evidence: string;
  /** The raw column (a top-level name or a dot path) it reads, when one. */
  column?: string;
  /** The spec value of a raw value, or undefined when this value says nothing. */
  read(raw: unknown): unknown;
}

export interface FieldFinding {
  entity: Entity;
  field: string;
  evidence: string;
  /** Sampled records (found in the store) with a value the source says something independent about. */
  compared: number;
  differing: number;
  examples: { key: string; source: unknown; store: unknown }[];
}

export interface GroupSide {
  count: number;
  sums: Record<string, string>;
}

export interface GroupDifference {
  entity: Entity;
  /** `day currency status type`, the parts the stream has (e.g. `2026-10-02 EUR approved deposit`). */
  group: string;
  source: GroupSide;
  store: GroupSide;
}

/** The newest date-time of a field, read in the definition's zone, ahead of the source's clock. */
export interface AheadOfClock {
  entity: Entity;
  field: string;
  key: string;
  value: string;
  clock: string;
  minutes: number;
  zone: string;
}

export interface StreamValues {
  entity: Entity;
  /** Records drawn for the sample, of `read` mapped records. */
  sampled: number;
  read: number;
  fields: FieldFinding[];
  groups?: { by: string; computed: 'sql' | 'pages'; compared: number; differing: GroupDifference[] };
  ahead?: AheadOfClock;
  /** What could not be judged apart from the definition, and why. */
  notes: string[];
}

export interface ValueReconciliation {
  sample: number;
  seed: number;
  streams: StreamValues[];
}

/** A bounded uniform sample of a stream of items (reservoir sampling), drawn by a seeded generator. */
export class Sample<T> {
  readonly items: T[] = [];
  private seen = 0;
  private readonly random: () => number;
  constructor(private readonly size: number, seed: number, salt: string) {
    let h = seed >>> 0;
    for (const c of salt) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
    this.random = mulberry32(h);
  }
  offer(item: T): void {
    this.seen += 1;
    if (this.items.length < this.size) this.items.push(item);
    else {
      const j = Math.floor(this.random() * this.seen);
      if (j < this.size) this.items[j] = item;
    }
  }
}

const ruleOf = (stream: StreamDefinition, field: string): FieldRule | undefined => stream.mapping.fields[field] ?? (stream.mapping.passthrough ? field : undefined);

/** The raw path a rule reads (not a constant), or undefined. */
function pathOf(rule: FieldRule | undefined, field: string): string | undefined {
  if (rule === undefined) return undefined;
  if (typeof rule === 'string') return rule;
  if (Object.hasOwn(rule, 'const')) return undefined;
  return rule.from ?? field;
}

function at(raw: unknown, path: string): unknown {
  let current = raw;
  for (const key of path.split('.')) {
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

const leafName = (path: string): string => path.slice(path.lastIndexOf('.') + 1);

function exact(value: unknown): Decimal | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return new Decimal(String(value));
  if (typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value)) return new Decimal(value.trim());
  if (typeof value === 'bigint') return new Decimal(value.toString());
  return undefined;
}

/** An ISO currency code as the source writes it (any case), upper-cased; anything else says nothing. */
const currencyCode = (v: unknown): string | undefined => (typeof v === 'string' && ISO_CODE.test(v) ? v.trim().toUpperCase() : undefined);

/**
 * How each field of a stream is read from the source apart from the definition's rule for it.
 * `columns`: the source's top-level column or field names (of a record read). `rest`: instants are
 * read from their own text (a database's date-times reach us already read in the definition's zone).
 */
export function readings(def: PartnerDefinition, entity: Entity, stream: StreamDefinition, columns: readonly string[], rest: boolean): { readings: Reading[]; notes: string[] } {
  const table = entityTable(def.variant, entity);
  const has = (f: string) => table.columns.some((c) => c.name === f);
  const out: Reading[] = [];
  const notes: string[] = [];

  if (has('currency')) {
    const rule = ruleOf(stream, 'currency');
    const path = pathOf(rule, 'currency');
    const named = columns.find((c) => CURRENCY_NAMES.includes(norm(c)));
    const amountColumns = AMOUNT_FIELDS.map((f) => pathOf(ruleOf(stream, f), f)).filter((p): p is string => p !== undefined);
    const coded = amountColumns.map((p) => ({ p, m: CURRENCY_CODE.exec(leafName(p)) })).find((x) => x.m !== null);
    if (path !== undefined) out.push({ field: 'currency', evidence: `${path} as the source writes it`, column: path, read: (raw) => currencyCode(at(raw, path)) });
    else if (named !== undefined) out.push({ field: 'currency', evidence: `its column ${named}`, column: named, read: (raw) => currencyCode(at(raw, named)) });
    else if (coded?.m) {
      const code = (coded.m[1] as string).toUpperCase();
      out.push({ field: 'currency', evidence: `the name ${leafName(coded.p)}`, read: () => code });
    } else notes.push(`currency: the source has no currency column and no amount named with one: ${rule === undefined ? 'unmapped' : `the definition's ${JSON.stringify(rule)}`} is not checked`);
  }

  for (const field of CODE_FIELDS) {
    if (!has(field)) continue;
    const values = specValues(def.variant, entity, field);
    const path = pathOf(ruleOf(stream, field), field);
    if (values === undefined || path === undefined) continue;
    out.push({ field, evidence: `${path}, a code naming a spec value`, column: path, read: (raw) => wordValue(at(raw, path), values) });
  }

  for (const field of AMOUNT_FIELDS) {
    if (!has(field)) continue;
    const path = pathOf(ruleOf(stream, field), field);
    if (path === undefined) continue;
    const name = leafName(path);
    const scale = MINOR_NAME.test(name) ? new Decimal('0.01') : THOUSANDS_NAME.test(name) ? new Decimal(1000) : undefined;
    if (scale === undefined) continue;
    out.push({ field, evidence: `the name ${name} (${scale.eq(1000) ? 'thousands' : 'hundredths'})`, column: path, read: (raw) => exact(at(raw, path))?.times(scale).toFixed() });
  }

  if (rest) {
    for (const column of table.columns.filter((c) => c.kind === 'timestamp')) {
      const path = pathOf(ruleOf(stream, column.name), column.name);
      if (path === undefined) continue;
      out.push({
        field: column.name,
        evidence: `${path} by its own offset or epoch`,
        column: path,
        read: (raw) => {
          const v = at(raw, path);
          if (typeof v === 'string' && OFFSET_TEXT.test(v.trim())) {
            const ms = Date.parse(v.trim().replace(' ', 'T'));
            return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
          }
          const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{9,13}(\.\d+)?$/.test(v.trim()) ? Number(v) : undefined;
          if (n === undefined || n < 1e8) return undefined;
          return new Date(n >= 1e11 ? n : n * 1000).toISOString();
        },
      });
    }
  }
  return { readings: out, notes };
}

/** Two values of a field equal as the store holds them (amounts as decimals, instants to the millisecond). */
function equal(field: string, source: unknown, store: unknown, kind: string | undefined): boolean {
  if (source === undefined) return true;
  if (store === undefined || store === null) return false;
  if (kind === 'decimal' || kind === 'integer') {
    const a = exact(source);
    const b = exact(store);
    return a !== undefined && b !== undefined && a.eq(b);
  }
  if (kind === 'timestamp') return Date.parse(String(source)) === Date.parse(String(store));
  return String(source) === String(store);
}

/** The sample against the store: per field read apart from the definition, how many differ and examples. */
export function compareSample(def: PartnerDefinition, entity: Entity, sample: readonly { key: string; raw: unknown }[], stored: (key: string) => SpecRecord | undefined, found: readonly Reading[], examples = 3): FieldFinding[] {
  const kinds = new Map(entityTable(def.variant, entity).columns.map((c) => [c.name, c.kind as string]));
  const findings: FieldFinding[] = found.map((r) => ({ entity, field: r.field, evidence: r.evidence, compared: 0, differing: 0, examples: [] }));
  // A personal field is compared as the partner's policy kept it (hashed, or not at all when dropped).
  const policy = entity === 'customers' && minimises(def.personal_data) ? def.personal_data : undefined;
  const kept = (field: string, value: unknown): unknown => (policy && isPersonalField(field) ? applied(policy, field, value) : value);
  for (const { key, raw } of sample) {
    const row = stored(key);
    if (row === undefined) continue;
    found.forEach((r, i) => {
      const value = kept(r.field, r.read(raw));
      if (value === undefined) return;
      const f = findings[i] as FieldFinding;
      f.compared += 1;
      if (equal(r.field, value, row[r.field], kinds.get(r.field))) return;
      f.differing += 1;
      if (f.examples.length < examples) f.examples.push({ key, source: value, store: row[r.field] ?? null });
    });
  }
  return findings.filter((f) => f.compared > 0);
}

/** The group a record falls in and its amounts: `parts` names the group's fields in order. */
export interface Grouping {
  parts: string[];
  amounts: string[];
}

export function grouping(variant: Variant, entity: Entity, dayField: string): Grouping {
  const table = entityTable(variant, entity);
  const parts = [dayField, ...['currency', 'status', 'transaction_type'].filter((f) => table.columns.some((c) => c.name === f))];
  return { parts, amounts: GROUP_AMOUNTS[variant][entity] ?? [] };
}

export class Groups {
  readonly map = new Map<string, { count: number; sums: Map<string, Decimal> }>();
  constructor(readonly by: Grouping) {}
  add(values: Record<string, unknown>, count = 1, sums?: Record<string, unknown>): void {
    const key = this.by.parts.map((p) => (p === this.by.parts[0] ? String(values[p] ?? '').slice(0, 10) : String(values[p] ?? '-'))).join(' ');
    const entry = this.map.get(key) ?? { count: 0, sums: new Map(this.by.amounts.map((a) => [a, new Decimal(0)])) };
    this.map.set(key, entry);
    entry.count += count;
    for (const a of this.by.amounts) {
      const v = exact((sums ?? values)[a]);
      if (v !== undefined) entry.sums.set(a, (entry.sums.get(a) as Decimal).plus(v));
    }
  }
}

const sideOf = (e: { count: number; sums: Map<string, Decimal> } | undefined, amounts: readonly string[]): GroupSide => ({ count: e?.count ?? 0, sums: Object.fromEntries(amounts.map((a) => [a, (e?.sums.get(a) ?? new Decimal(0)).toFixed()])) });

export function compareGroups(entity: Entity, source: Groups, store: Groups): { compared: number; differing: GroupDifference[] } {
  const keys = [...new Set([...source.map.keys(), ...store.map.keys()])].sort();
  const differing: GroupDifference[] = [];
  for (const key of keys) {
    const s = sideOf(source.map.get(key), source.by.amounts);
    const t = sideOf(store.map.get(key), source.by.amounts);
    const same = s.count === t.count && source.by.amounts.every((a) => new Decimal(s.sums[a] as string).eq(new Decimal(t.sums[a] as string)));
    if (!same) differing.push({ entity, group: key, source: s, store: t });
  }
  return { compared: keys.length, differing };
}

/**
 * A source record's group values: each grouped field and amount read apart from the definition
 * where the source says so (`readings`), else as the definition maps it (`mapped`).
 */
export function independentValues(raw: unknown, mapped: SpecRecord, found: readonly Reading[], by: Grouping): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of [...by.parts, ...by.amounts]) {
    const r = found.find((x) => x.field === f);
    const v = r?.read(raw);
    out[f] = v !== undefined ? v : mapped[f];
  }
  return out;
}

/** One field's rule applied to a raw value (a group's code or sum): the definition's own reading. */
export function ruleReader(def: PartnerDefinition, entity: Entity, field: string, rule: FieldRule): (v: unknown) => unknown {
  const map = createMapper(def.variant, entity, { fields: { [field]: typeof rule === 'string' ? { from: 'v' } : { ...rule, from: 'v' } }, passthrough: false }, def.affiliates);
  return (v) => {
    const m = map({ v });
    return 'record' in m ? m.record[field] : undefined;
  };
}

export const findingLine = (f: FieldFinding): string =>
  `DIFF ${f.entity}: ${f.field} differs in ${f.differing} of ${f.compared} sampled records, e.g. ${f.examples.map((e) => `${e.key}: source ${show(e.source)}, store ${show(e.store)}`).join('; ')} (source: ${f.evidence})`;

function show(v: unknown): string {
  if (typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v)) return v;
  return typeof v === 'string' ? v : JSON.stringify(v);
}

export interface StreamReadings {
  found: { readings: Reading[]; notes: string[] };
  sample: Sample<{ key: string; raw: unknown }>;
  /** Records of the days asked that the definition mapped. */
  mapped: number;
  /** The groups over the pages read (REST; a database stream its SQL cannot group). */
  pageGroups: Groups;
  /** The store's records of the days asked, by key. */
  stored: Map<string, SpecRecord>;
  /** Per date-time field, the newest value read (in the definition's zone) and its record. */
  newest: Map<string, { value: string; key: string }>;
  /** The source's clock (a database's own; REST: ours), epoch ms. */
  clock: number | undefined;
}

const TOP_LEVEL = (c: string | undefined): c is string => c !== undefined && !c.includes('.');
const LINEAR = ['from', 'number', 'minor_units', 'multiply'];

/**
 * The source's groups by its SQL, read apart from the definition where the source says so: the
 * currency, status and type columns' raw values and the raw sums, each through its reading, else
 * through the definition's rule (a linear amount rule only). A reason when it cannot.
 */
async function sqlGroups(deps: AggregateDeps, def: PartnerDefinition, entity: Entity, stream: StreamDefinition, from: string, to: string, by: Grouping, found: readonly Reading[]): Promise<Groups | string> {
  const group: Record<string, string> = {};
  const fixed: Record<string, unknown> = {};
  const readers: Record<string, (v: unknown) => unknown> = {};
  for (const part of by.parts.slice(1)) {
    const reading = found.find((r) => r.field === part);
    const rule = ruleOf(stream, part);
    const column = reading?.column ?? pathOf(rule, part);
    if (TOP_LEVEL(column)) {
      group[part] = column;
      const ruled = rule === undefined ? undefined : ruleReader(def, entity, part, rule);
      readers[part] = (v) => {
        const own = reading?.column === column ? reading.read({ [column]: v }) : undefined;
        return own !== undefined ? own : ruled?.(v);
      };
    } else if (column !== undefined) return `${part} is read from the nested ${column}`;
    else fixed[part] = reading !== undefined ? reading.read({}) : rule === undefined ? undefined : ruleReader(def, entity, part, rule)(undefined);
  }
  const sums: Record<string, string> = {};
  for (const amount of by.amounts) {
    const reading = found.find((r) => r.field === amount);
    const rule = ruleOf(stream, amount);
    const column = pathOf(rule, amount);
    if (rule === undefined) continue;
    if (!TOP_LEVEL(column)) return `${amount} is not read from one column`;
    if (reading === undefined && typeof rule === 'object' && !Object.keys(rule).every((k) => LINEAR.includes(k))) return `${amount} is not a linear rule on one column`;
    sums[amount] = column;
    const ruled = ruleReader(def, entity, amount, typeof rule === 'string' ? { from: rule, number: true } : { ...rule, number: true });
    readers[amount] = (v) => (reading !== undefined ? reading.read({ [column]: v }) : ruled(v));
  }
  const raw = await sourceGroups(deps, def, entity, stream, from, to, group, sums);
  if (raw === undefined) return 'not a database source';
  if ('skipped' in raw) return raw.skipped;
  const groups = new Groups(by);
  for (const g of raw.groups) {
    const values: Record<string, unknown> = { [by.parts[0] as string]: g.day, ...fixed };
    for (const part of Object.keys(group)) values[part] = (readers[part] as (v: unknown) => unknown)(g.values[part]);
    const amounts: Record<string, unknown> = {};
    for (const amount of Object.keys(sums)) amounts[amount] = g.sums[amount] === null || g.sums[amount] === undefined ? undefined : (readers[amount] as (v: unknown) => unknown)(g.sums[amount]);
    groups.add(values, g.count, amounts);
  }
  return groups;
}

/** One stream's values against the store: the sample by field, the groups, the newest date-time against the clock. */
export async function streamValues(deps: AggregateDeps, def: PartnerDefinition, entity: Entity, stream: StreamDefinition, from: string, to: string, aheadMs: number, r: StreamReadings): Promise<StreamValues> {
  const by = grouping(def.variant, entity, DAY_FIELD[entity]);
  const notes = [...r.found.notes];
  const fields = compareSample(def, entity, r.sample.items, (k) => r.stored.get(k), r.found.readings);
  // Grouped by day alone, with no amount read apart from the definition, the groups are the day comparison again.
  if (by.parts.length === 1 && !r.found.readings.some((x) => by.amounts.includes(x.field))) {
    return { entity, sampled: r.sample.items.length, read: r.mapped, fields, ...aheadOf(def, entity, stream, aheadMs, r), notes };
  }
  const storeGroups = new Groups(by);
  for (const record of r.stored.values()) storeGroups.add(record);
  let source: Groups = r.pageGroups;
  let computed: 'sql' | 'pages' = 'pages';
  if (def.source.type !== 'rest') {
    const sql = await sqlGroups(deps, def, entity, stream, from, to, by, r.found.readings).catch((e: Error) => `the SQL failed: ${deps.redact(e.message)}`);
    if (typeof sql === 'string') notes.push(`groups by ${by.parts.join(', ')} counted over the rows read, not by SQL (${sql})`);
    else {
      source = sql;
      computed = 'sql';
    }
  }
  const groups = { by: by.parts.join(', '), computed, ...compareGroups(entity, source, storeGroups) };
  return { entity, sampled: r.sample.items.length, read: r.mapped, fields, groups, ...aheadOf(def, entity, stream, aheadMs, r), notes };
}

/** The newest date-time ahead of the source's clock by more than `aheadMs`, the most ahead of the fields. */
function aheadOf(def: PartnerDefinition, entity: Entity, stream: StreamDefinition, aheadMs: number, r: StreamReadings): { ahead?: AheadOfClock } {
  let ahead: AheadOfClock | undefined;
  if (r.clock !== undefined) {
    for (const [field, n] of r.newest) {
      const ms = Date.parse(n.value);
      if (Number.isNaN(ms) || ms - r.clock <= aheadMs || (ahead !== undefined && ahead.minutes * 60_000 >= ms - r.clock)) continue;
      const rule = ruleOf(stream, field);
      const zone = (typeof rule === 'object' ? rule.datetime?.zone : undefined) ?? ('timezone' in def.source ? def.source.timezone : undefined) ?? 'UTC';
      ahead = { entity, field, key: n.key, value: n.value, clock: new Date(r.clock).toISOString(), minutes: Math.round((ms - r.clock) / 60_000), zone };
    }
  }
  return ahead ? { ahead } : {};
}

/** The report's lines of the values: a line per field that differs, group that differs, date-time ahead of the clock; notes; a summary per stream. */
export function valueLines(v: ValueReconciliation, limit = 10): string[] {
  const lines: string[] = [];
  for (const s of v.streams) {
    for (const f of s.fields.filter((x) => x.differing > 0)) lines.push(findingLine(f));
    const groups = s.groups?.differing ?? [];
    for (const g of groups.slice(0, limit)) {
      const side = (x: GroupSide) => `${x.count} record(s)${Object.keys(x.sums).length ? `, ${Object.entries(x.sums).map(([k, n]) => `${k} ${n}`).join(', ')}` : ''}`;
      lines.push(`DIFF ${s.entity} ${g.group}: source ${side(g.source)}; store ${side(g.store)}`);
    }
    if (groups.length > limit) lines.push(`     (+${groups.length - limit} more group(s) of ${s.entity} differ)`);
    if (s.ahead) {
      const a = s.ahead;
      lines.push(`DIFF ${s.entity}: ${a.field} of ${a.key} is ${a.value}, ${a.minutes} minutes after the source's clock (${a.clock}): its times are not in ${a.zone} (set the source's timezone, or the field's datetime zone)`);
    }
    for (const n of s.notes) lines.push(`note ${s.entity}: ${n}`);
    const judged = s.fields.map((f) => f.field);
    const ok = s.fields.every((f) => f.differing === 0) && groups.length === 0 && !s.ahead;
    lines.push(`${ok ? 'ok  ' : 'DIFF'} ${s.entity} values: ${s.sampled} of ${s.read} record(s) sampled (seed ${v.seed})${judged.length ? `, read apart from the definition: ${judged.join(', ')}` : ', no field read apart from the definition'}; ${s.groups ? `${s.groups.compared} group(s) by ${s.groups.by} ${s.groups.computed === 'sql' ? 'by SQL on the source' : 'over the records read'}${groups.length ? `, ${groups.length} differ` : ''}` : 'counted per day above'}`);
  }
  return lines;
}
