/**
 * `init`'s mapping of one stream: which source field feeds each spec field, and by what rule.
 * Fields are matched by the relation's structure first where it speaks (a primary key is the
 * customers' or transactions' key; a declared foreign key or a column whose sampled values are all
 * customers' keys is the customer_id), then by name (the vocabulary), then a required date by its
 * format. The rule follows the values' format (epoch → datetime, cents → minor_units, thousands →
 * multiply, decimal text → number, obvious codes → map). Every guess beyond a plain name says its
 * evidence in a comment; a guess that could be wrong keeps a `# TODO:`, but the field is filled, so
 * the draft always loads: a relation without records gets the spec's own field names.
 */
import { specFields, type SpecFieldKind } from '../config/mapping-rules.js';
import type { Entity, Variant } from '../types.js';
import { referenceText } from './discovery.js';
import { type ReferenceSeen } from './discovery.js';
import type { FieldProfile } from './profile.js';
import { ABBREVIATIONS, CHANGE, CUSTOMER_NAME, norm, obviousMap, partialMap, specSchema, specValues, stripThousands, stripUnits, SYNONYMS, THOUSANDS_NAME, yamlString } from './vocabulary.js';

/** What the relation's structure says, beside its fields' names and values. */
export interface Structure {
  /** The table, view or list path, as the evidence names it. */
  where: string;
  /** Its single-column primary key. */
  primaryKey?: string;
  /** Its fields found to point at the customers' key (declared or measured on the sample). */
  customerRefs: ReferenceSeen[];
  /** Records sampled (for evidence of uniqueness). */
  sampled: number;
  /** Prop trading: the relation is a fee or purchase table whose rows are challenge fees. */
  feeTable?: boolean;
}

interface FieldChoice {
  rule?: string;
  todo?: string;
  source?: string;
  /** Why this source field, when more than its name says it. */
  evidence?: string;
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
    const seen = f.distinct.map((v) => JSON.stringify(v)).join(', ');
    // The full set of values (a database's SELECT DISTINCT; a REST list read whole, or over its
    // history until the set stopped growing) proves the map; a sample does not.
    const full = f.distinct_from === 'table' || f.distinct_from === 'history';
    const every = f.distinct_from === 'table' ? `every value ${from} holds in ${database ? 'the table' : 'the source'} (SELECT DISTINCT: ${seen})` : `every value ${from} holds ${f.distinct_note ?? 'in the source'}: ${seen}`;
    const sampled = f.distinct_note === undefined ? '' : `: ${f.distinct_note}`;
    const map = obviousMap(f.distinct, values);
    const partial = map === undefined ? partialMap(f.distinct, values) : undefined;
    if (partial !== undefined && Object.keys(partial.map).length > 0) {
      // The codes that say their value are mapped; the others are named, and stay out of the map
      // (a value outside a map fails check), so nothing is guessed.
      const entries = Object.entries(partial.map).map(([code, value]) => `${yamlString(code)}: ${value}`).join(', ');
      return {
        rule: `{ ${ref}, map: { ${entries} } }`,
        todo: `${entity}.${field}: ${partial.unknown.map((v) => JSON.stringify(v)).join(', ')} of ${from} ${partial.unknown.length === 1 ? 'has' : 'have'} no obvious spec value: add ${partial.unknown.length === 1 ? 'it' : 'them'} to the map (${values.join(' | ')}); until then check fails on ${partial.unknown.length === 1 ? 'it' : 'them'}${full ? '' : ` (the codes of a sample${sampled})`}`,
        source: from,
        ...(f.distinct_from === 'history' ? { evidence: every } : {}),
      };
    }
    if (map === undefined) {
      return {
        rule: yamlString(from),
        todo: `${entity}.${field}: the codes of ${from} are not obvious: ${seen}${f.distinct_from === 'table' ? ' (every value of the table)' : full ? ` (all its values, ${f.distinct_note ?? 'in the source'})` : ` (the values of a sample${sampled})`}; add map: { <code>: <${values.join(' | ')}> }`,
        source: from,
      };
    }
    const proof = full
      ? { evidence: every }
      : { todo: `${entity}.${field}: the values of ${from} come from a sample (${seen})${sampled}; a value the sample did not hold is a reject: confirm the partner's full list of codes` };
    if (Object.keys(map).length === 0) return { rule: yamlString(from), source: from, ...proof };
    // Every value seen is listed (a spec value as itself): a value outside the map is a reject.
    const entries = f.distinct.map((v) => `${yamlString(String(v))}: ${map[String(v)] ?? String(v)}`).join(', ');
    return { rule: `{ ${ref}, map: { ${entries} } }`, source: from, ...proof };
  }
  if (values !== undefined && f.format !== 'text' && f.format !== undefined) {
    return { rule: yamlString(from), todo: `${entity}.${field}: ${from} holds codes (${f.examples.map((v) => JSON.stringify(v)).join(', ')}...) too many to list; add a map to spec values (${values.join(', ')})`, source: from };
  }
  return { rule: yamlString(from), source: from };
}

/** Words too common in field names to say two fields hold the same thing. */
const COMMON_WORDS = new Set(['id', 'date', 'code', 'type', 'name', 'status', 'value', 'amount', 'count', 'total', 'first', 'last', 'time', 'at', 'ts', 'is', 'no', 'num', 'flag', 'max', 'min']);

/** The significant words of a field name (snake, kebab, dot and camel case split, lower-cased). */
function nameWords(name: string): string[] {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase().split(/[^a-z0-9]+/).filter((w) => w.length >= 3 && !COMMON_WORDS.has(w));
}

/** `upper` or `lower` when every value, so cased, has the form `pattern` (text values only). */
function caseFitting(values: readonly unknown[], pattern: RegExp): 'upper' | 'lower' | undefined {
  if (values.length === 0 || !values.every((v) => typeof v === 'string')) return undefined;
  const texts = values as string[];
  if (texts.every((v) => pattern.test(v.toUpperCase()))) return 'upper';
  if (texts.every((v) => pattern.test(v.toLowerCase()))) return 'lower';
  return undefined;
}

/** A currency code at the end of a name (stake_eur, amountGBP). */
export const CURRENCY_CODE = /(?:^|[_.-]|[a-z](?=[A-Z]))(usd|eur|gbp|cad|aud|sek|nok|dkk|chf|jpy|brl|inr|zar|nzd|pln|czk|try)$/i;

/** A field's names to match: its whole path, then its last segment (money.amount → amount). */
const namesOf = (f: FieldProfile): string[] => {
  const leaf = f.name.split('.').pop() as string;
  return leaf === f.name ? [f.name] : [f.name, leaf];
};

interface Match {
  field: FieldProfile;
  evidence?: string;
  doubt?: string;
}

/** The source field that best matches a spec field by name, among those not yet used. */
function matchByName(entity: Entity, field: string, candidates: readonly FieldProfile[]): Match | undefined {
  for (const pick of [0, 1]) {
    const named = (f: FieldProfile) => namesOf(f)[pick];
    const exact = candidates.find((f) => named(f) !== undefined && norm(named(f) as string) === norm(field));
    if (exact) return { field: exact };
    for (const synonym of SYNONYMS[entity][field] ?? []) {
      const hit = candidates.find((f) => {
        const name = named(f);
        return name !== undefined && (norm(name) === synonym || stripUnits(norm(name)).includes(synonym) || (THOUSANDS_NAME.test(name) && stripThousands(name) === synonym));
      });
      if (!hit) continue;
      const word = ABBREVIATIONS[synonym];
      return word ? { field: hit, evidence: word.says, ...(word.doubt ? { doubt: word.doubt } : {}) } : { field: hit };
    }
  }
  // Last: a name with a currency code after it (stake_eur → stake; not usd, the spec's amount_usd).
  for (const synonym of SYNONYMS[entity][field] ?? []) {
    const hit = candidates.find((f) => {
      const code = CURRENCY_CODE.exec(f.name);
      return code !== null && code[1]?.toLowerCase() !== 'usd' && norm(f.name.slice(0, code.index)) === synonym;
    });
    if (hit) return { field: hit, evidence: `${hit.name} is ${synonym} in the currency its name says` };
  }
  return undefined;
}

/**
 * The customer_id of transactions and activity: a declared foreign key to the customers' key,
 * else the name (backed by containment when measured), else the one column whose sampled values
 * all lie in the customers' key and whose name says customer, else the only such column (a TODO:
 * small codes can lie in a range of ids too).
 */
function matchCustomerRef(entity: Entity, candidates: readonly FieldProfile[], s: Structure): Match | undefined {
  const byName = (name: string | undefined) => candidates.find((f) => f.name === name);
  const declared = s.customerRefs.find((r) => r.how === 'declared' && byName(r.column));
  if (declared) return { field: byName(declared.column) as FieldProfile, evidence: referenceText(declared) };
  const contained = s.customerRefs.filter((r) => r.how === 'contained' && byName(r.column));
  const named = matchByName(entity, 'customer_id', candidates);
  if (named) {
    const backed = contained.find((r) => r.column === named.field.name);
    return backed ? { field: named.field, evidence: referenceText(backed) } : named;
  }
  const customerish = contained.filter((r) => CUSTOMER_NAME.test(r.column));
  const best = customerish.length === 1 ? customerish[0] : contained.length === 1 ? contained[0] : undefined;
  if (best === undefined) return undefined;
  return {
    field: byName(best.column) as FieldProfile,
    evidence: referenceText(best),
    ...(customerish.length === 1 ? {} : { doubt: `only its sampled values say ${best.column} is the customer (fields holding only customers' keys: ${contained.map((r) => r.column).join(', ')})` }),
  };
}

/** A key without a name match: the primary key, else the one field unique in the sample named like an id. */
function matchKey(field: string, candidates: readonly FieldProfile[], s: Structure): Match | undefined {
  if (field !== 'customer_id' && field !== 'transaction_id') return undefined;
  const pk = candidates.find((f) => f.name === s.primaryKey);
  if (pk) return { field: pk, evidence: `the primary key of ${s.where}` };
  const unique = candidates.filter((f) => f.unique && /(^|[a-z_.])(id|key|no|code|number)$/i.test(f.name));
  if (unique.length === 0) return undefined;
  const sure = unique.length === 1 && /^(id|_id)$/i.test(unique[0]?.name.split('.').pop() ?? '');
  return { field: unique[0] as FieldProfile, evidence: `unique in the sample of ${s.sampled} records`, ...(sure ? {} : { doubt: `check ${unique[0]?.name} is the record's key (unique in the sample: ${unique.map((f) => f.name).join(', ')})` }) };
}

const GAME_TYPE_WORDS: [RegExp, string][] = [[/sport|bet(?!s)/i, 'sportsbook'], [/casino|slot/i, 'casino'], [/poker/i, 'poker'], [/bingo/i, 'bingo'], [/lotto|lotter/i, 'lottery']];

/** A required field no source field feeds: a fixed value the structure suggests, else the spec's name. */
function fallback(variant: Variant, entity: Entity, field: string, fields: readonly FieldProfile[], s: Structure): FieldChoice {
  const todoOf = (why: string) => `${entity}.${field}: ${why}`;
  if (field === 'transaction_type' && s.feeTable && variant === 'prop-trading') {
    return { rule: '{ const: challenge_fee }', evidence: `${s.where} is a fee or purchase table of a prop-trading partner and has no type field: its rows are challenge fees`, todo: todoOf(`every row of ${s.where} taken as a challenge fee; map its type field if it also holds reset fees or refunds`) };
  }
  if (field === 'status') return { rule: '{ const: approved }', todo: todoOf(`${s.where} has no status field; every record taken as approved (a row exists once paid)`) };
  if (field === 'currency') {
    const coded = fields.map((f) => CURRENCY_CODE.exec(f.name)).find((m) => m !== null);
    if (coded) return { rule: `{ const: ${(coded[1] as string).toUpperCase()} }`, evidence: `no currency field; the amount's name ${coded.input} says ${(coded[1] as string).toUpperCase()}` };
    return { rule: '{ const: USD }', todo: todoOf(`no currency field in ${s.where}; USD assumed: set the partner's currency`) };
  }
  if (field === 'game_type') {
    const word = GAME_TYPE_WORDS.find(([pattern]) => pattern.test(s.where));
    if (word) return { rule: `{ const: ${word[1]} }`, evidence: `no game type field; the name ${s.where} says ${word[1]}` };
  }
  return { rule: field, todo: todoOf(`no source field found for this required spec field; the spec's name assumed (source fields: ${fields.map((f) => f.name).join(', ') || 'none seen'})`) };
}

export interface StreamDraft {
  lines: string[];
  mapping: Record<string, string>;
  /** The source field mapped to each spec field. */
  sources: Record<string, string>;
}

export const UNUSED = '        # source fields not mapped (not spec fields, or not recognised): ';

export function mappingLines(variant: Variant, entity: Entity, fields: readonly FieldProfile[], database: boolean, todos: string[], structure: Structure): StreamDraft {
  const spec = specFields(variant, entity);
  const required = new Set(specSchema(variant, entity).required);
  const used = new Set<string>();
  const lines: string[] = [];
  const mapping: Record<string, string> = {};
  const sources: Record<string, string> = {};
  // Required fields first, so that an optional field cannot take their source (createdAt, date).
  const order = [...spec.keys()].sort((a, b) => Number(required.has(b)) - Number(required.has(a)));
  const chosen = new Map<string, FieldChoice>();
  const pick = (field: string, m: Match) => {
    used.add(m.field.name);
    const choice = chooseField(variant, entity, field, spec.get(field) ?? 'other', m.field, database);
    const doubt = m.doubt ? `${entity}.${field}: ${m.doubt}` : undefined;
    chosen.set(field, { ...choice, ...(m.evidence || choice.evidence ? { evidence: [m.evidence, choice.evidence].filter(Boolean).join('; ') } : {}), ...(doubt || choice.todo ? { todo: [doubt, choice.todo].filter(Boolean).join('; ') } : {}) });
  };
  const free = () => fields.filter((f) => !used.has(f.name) && f.present > 0);
  const patterns = specSchema(variant, entity).properties;
  const notes: string[] = [];
  for (const field of order) {
    const m = field === 'customer_id' && entity !== 'customers' ? matchCustomerRef(entity, free(), structure) : matchByName(entity, field, free());
    if (!m) continue;
    // A field whose spec values have a form (country ISO codes, currency codes): the sample's values must have it.
    const pattern = patterns[field]?.pattern;
    const misfit = pattern === undefined ? undefined : [...(m.field.distinct ?? []), ...m.field.examples].find((v) => typeof v !== 'string' || !new RegExp(pattern).test(v));
    // Values of the form once upper- or lower-cased (country `de`, currency `eur`): a case rule.
    const cased = misfit === undefined || pattern === undefined ? undefined : caseFitting([...(m.field.distinct ?? []), ...m.field.examples], new RegExp(pattern));
    if (cased !== undefined) {
      pick(field, { ...m, evidence: [m.evidence, `its values (${JSON.stringify(misfit)}...) are of the form ${pattern} once ${cased}-cased`].filter(Boolean).join('; ') });
      const choice = chosen.get(field);
      if (choice !== undefined) choice.rule = `{ from: ${yamlString(m.field.name)}, case: ${cased} }`;
      continue;
    }
    if (misfit !== undefined && !required.has(field)) {
      const todo = `${entity}.${field}: ${m.field.name} not mapped: its values (${JSON.stringify(misfit)}) are not of the form ${pattern}: add a map to that form, or confirm the partner has no ${field}`;
      todos.push(todo);
      notes.push(`        # TODO: ${todo}`);
      used.add(m.field.name);
      continue;
    }
    pick(field, misfit === undefined ? m : { ...m, doubt: [m.doubt, `values such as ${JSON.stringify(misfit)} are not of the form ${pattern}: add a map`].filter(Boolean).join('; ') });
  }
  // Codes without a name: the one unused field whose every value has an obvious spec value (DEPOSIT, CASHOUT → deposit, withdrawal).
  for (const field of order) {
    const values = required.has(field) && !chosen.has(field) ? specValues(variant, entity, field) : undefined;
    if (values === undefined) continue;
    // Most of its codes (at least half) say their value; the rest are named by a TODO.
    const fits = free().filter((f) => {
      if (f.distinct === undefined) return false;
      const partial = partialMap(f.distinct, values);
      const known = Object.keys(partial?.map ?? {}).length;
      return known > 0 && known * 2 >= f.distinct.length;
    });
    if (fits.length === 1) pick(field, { field: fits[0] as FieldProfile, evidence: `its values (${(fits[0]?.distinct ?? []).map((v) => JSON.stringify(v)).join(', ')}) are ${field} codes` });
  }
  // Keys without a name: the primary key, or a field unique in the sample.
  for (const field of order) {
    const m = chosen.has(field) ? undefined : matchKey(field, free(), structure);
    if (m) pick(field, m);
  }
  // By type: a required date-time or date field without a name match takes the one unused field of that format.
  for (const field of order) {
    const kind = spec.get(field);
    if (chosen.has(field) || !required.has(field) || (kind !== 'date-time' && kind !== 'date')) continue;
    const formats = kind === 'date' ? ['date'] : ['iso-datetime-offset', 'iso-datetime-local', 'sql-datetime', 'dd/MM/yyyy HH:mm', 'epoch-millis', 'epoch-seconds'];
    const fits = free().filter((f) => f.format !== undefined && formats.includes(f.format) && !CHANGE.test(f.name));
    if (fits.length !== 1) continue;
    const f = fits[0] as FieldProfile;
    pick(field, { field: f, doubt: `${f.name} chosen by its format (${f.format}), the only such field; check it is the right one` });
  }
  // last_modified_date: the one free date-time field named like a change stamp (updated_ts, modifiedOn).
  if (spec.has('last_modified_date') && !chosen.has('last_modified_date')) {
    const stamps = free().filter((f) => CHANGE.test(f.name.split('.').pop() ?? f.name) && ['iso-datetime-offset', 'iso-datetime-local', 'sql-datetime', 'dd/MM/yyyy HH:mm', 'epoch-millis', 'epoch-seconds'].includes(f.format ?? ''));
    if (stamps.length === 1) pick('last_modified_date', { field: stamps[0] as FieldProfile, evidence: `${stamps[0]?.name} is named like a change stamp, the record's last modification` });
  }
  // An optional spec field left unmapped while a source field's name shares a word with it
  // (kyc_flag and kyc_status_id, COUNTRY and country_code): a TODO, never silence.
  for (const field of spec.keys()) {
    if (chosen.has(field) || required.has(field)) continue;
    const words = nameWords(field);
    const kind = spec.get(field);
    const fitsKind = (f: FieldProfile) => {
      const formats = kind === 'date-time' ? ['iso-datetime-offset', 'iso-datetime-local', 'sql-datetime', 'dd/MM/yyyy HH:mm', 'epoch-millis', 'epoch-seconds'] : kind === 'date' ? ['date'] : kind === 'number' || kind === 'integer' ? ['integer', 'decimal', 'integer-string', 'decimal-string'] : undefined;
      return formats === undefined || (f.format !== undefined && f.format !== 'mixed' && formats.includes(f.format));
    };
    const near = free().filter(fitsKind).filter((f) => nameWords(f.name.split('.').pop() ?? f.name).some((w) => words.some((v) => w === v || (Math.min(w.length, v.length) >= 4 && (w.startsWith(v) || v.startsWith(w))))));
    if (near.length === 0) continue;
    if (near.length === 1) {
      // One source field shares a word with it: mapped, with the doubt to confirm.
      const f = near[0] as FieldProfile;
      pick(field, { field: f, doubt: `${f.name} mapped to ${field} only because their names share a word: confirm it holds the ${field}, or delete the line` });
      continue;
    }
    const shown = near.map((f) => `${f.name}${f.distinct ? ` (values ${f.distinct.slice(0, 6).map((v) => JSON.stringify(v)).join(', ')})` : f.examples.length > 0 ? ` (e.g. ${f.examples.slice(0, 2).map((v) => JSON.stringify(v)).join(', ')})` : ''}`).join(', ');
    const todo = `${entity}.${field}: not mapped, but ${shown} may hold it: map it, or confirm the partner has no ${field}`;
    todos.push(todo);
    notes.push(`        # TODO: ${todo}`);
  }
  for (const field of spec.keys()) {
    let choice = chosen.get(field);
    if (choice === undefined) {
      if (!required.has(field)) continue;
      choice = fields.length === 0 ? { rule: field } : fallback(variant, entity, field, fields, structure);
    }
    if (choice.evidence) lines.push(`        # ${field}${choice.source ? ` ← ${choice.source}` : ''}: ${choice.evidence}`);
    if (choice.todo) {
      todos.push(choice.todo);
      lines.push(`        # TODO: ${choice.todo}`);
    }
    lines.push(`        ${field}: ${choice.rule}`);
    mapping[field] = choice.rule as string;
    if (choice.source) sources[field] = choice.source;
  }
  lines.push(...notes);
  const unused = fields.filter((f) => !used.has(f.name)).map((f) => f.name);
  if (unused.length > 0) lines.push(UNUSED + unused.join(', '));
  return { lines, mapping, sources };
}

/** The mapping's lines without `name` in its list of unmapped fields (it drives the cursor, not a spec field). */
export function usedAsCursor(lines: string[], name: string | undefined): string[] {
  if (name === undefined) return lines;
  return lines.flatMap((line) => {
    if (!line.startsWith(UNUSED)) return [line];
    const rest = line.slice(UNUSED.length).split(', ').filter((f) => f !== name);
    return [`        # ${name} drives the cursor (not a spec field)`, ...(rest.length > 0 ? [UNUSED + rest.join(', ')] : [])];
  });
}
