/**
 * The history sample of a REST list: pages spread over the partner's history, beyond the first
 * ones, so that a code map (transaction kinds, statuses, KYC states) holds the codes the partner
 * has used, not those of its latest page. A first page of deposits only gave a map of one value,
 * and the backfill then rejected every older refund and payout.
 *
 * Where the samples come from, in this order of preference:
 * - the list read to its end already: its values are all the list's;
 * - a date filter (a parameter for which a bound in the future answers no records): the first
 *   page of windows 7, 30, 90 and 365 days back;
 * - page numbers or offsets: pages at positions spread over the list (a quarter, the middle, three
 *   quarters and the last page when a total is given; when none is, the end found by jumping ahead
 *   and halving back);
 * - none (token pages without a date filter): the first pages only, said so.
 * Each is a fixed, small number of requests, sent through the connector's own client (its rate
 * limit, spec §8, and its retries). A value set is shown complete when the list was read whole,
 * or when every planned page was read and the last one that brought records not read before
 * brought no new value; otherwise the draft keeps a TODO saying why.
 */
import { SourceError } from '../../connectors/source.js';
import { probeBody, recordsOf, type GetJson } from './discover-paging.js';
import type { DateFilterSeen, HistorySampleSeen, HistorySeen, PaginationSeen } from './discovery.js';
import { leaves, profileRecords, type FieldProfile } from './profile.js';
import { CHANGE } from './vocabulary.js';

/** Days back from discovery's clock where the date windows end (the newest first). */
export const HISTORY_DAYS = [7, 30, 90, 365] as const;
/** Pages at positions read when a total is given (also: every page left, when no more than these). */
const POSITIONS = 4;
/** Requests spent on finding a list's end by page positions when no total is given. */
const END_PROBES = 6;

const DAY = 86_400_000;
/** A lower bound no partner has records beyond (tomorrow), an upper bound none has records before. */
const FUTURE_DAYS = 1;
const PAST = Date.UTC(2000, 0, 1);

/** Query parameters of a lower bound on a list's dates, the spec's window names first. */
export const FROM_PARAMS = ['modified_since', 'updated_since', 'updated_after', 'updatedAfter', 'updatedSince', 'modifiedSince', 'since', 'from', 'start_date', 'date_from', 'from_date', 'created_after'];
/** Query parameters of an upper bound. */
export const TO_PARAMS = ['modified_until', 'updated_until', 'updated_before', 'updatedBefore', 'updatedUntil', 'modifiedUntil', 'until', 'to', 'end_date', 'date_to', 'to_date', 'created_before'];

export interface Walked {
  records: unknown[];
  pages: number;
  /** The first pages reached the list's end (an empty page, no next token, the total). */
  whole: boolean;
  /** Records on the walk's first page: the partner's page size. */
  pageSize: number;
}

export interface HistoryContext {
  get: GetJson;
  /** The parameters of every request: the endpoint's own (the user's query) and the walk's page size. */
  sized: Record<string, string>;
  pagination: PaginationSeen;
  walked: Walked;
  total?: number;
  now: Date;
}

/** The pages read, in the order of the history (the first pages, then older windows or deeper positions). */
export interface HistoryRead {
  seen: HistorySeen;
  steps: { label: string; records: unknown[] }[];
  /** The records of the pages beyond the first ones not read before, each once. */
  added: unknown[];
}

type Read = Omit<HistoryRead, 'added'>;

type Format = DateFilterSeen['format'];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function boundText(ms: number, format: Format): string {
  if (format === 'epoch-seconds') return String(Math.floor(ms / 1000));
  if (format === 'epoch-millis') return String(ms);
  const iso = new Date(ms).toISOString();
  return format === 'date' ? iso.slice(0, 10) : iso.replace(/\.\d{3}Z$/, 'Z');
}

/** The form of a bound the user gave in the list path (`from=2024-01-01`), if it is a date (a bare number may be an id: not tried). */
function formatOfValue(value: string): Format | undefined {
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return 'date';
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(value)) return 'iso';
  return undefined;
}

/** How the records write their dates: the change field's form first, else the first date-time field's. */
function stampFormat(records: readonly unknown[]): Format | undefined {
  const stamps = profileRecords(records).filter((f) => ['iso-datetime-offset', 'iso-datetime-local', 'epoch-seconds', 'epoch-millis', 'date'].includes(f.format ?? ''));
  const f = stamps.find((s) => CHANGE.test(s.name)) ?? stamps[0];
  if (f === undefined) return undefined;
  return f.format === 'epoch-seconds' || f.format === 'epoch-millis' || f.format === 'date' ? f.format : 'iso';
}

const emptyAnswer = (body: unknown): boolean => body !== undefined && (recordsOf(body)?.records.length ?? -1) === 0;

/**
 * The list's date filter: the first parameter for which tomorrow as a lower bound answers no
 * records (a parameter the partner ignores answers the first page again; one it refuses, a 4xx),
 * then the upper bound for which 2000-01-01 answers none. The user's own date parameters are
 * tried first, in their own form; the others in the form of the records' dates.
 */
async function findDateFilter(ctx: HistoryContext): Promise<{ filter?: DateFilterSeen; tried: string }> {
  const format = stampFormat(ctx.walked.records);
  const own = Object.entries(ctx.sized).flatMap(([name, value]) => {
    const f = formatOfValue(value);
    return f === undefined ? [] : [{ name, format: f }];
  });
  const named = (names: readonly string[]) => (format === undefined ? [] : names.filter((n) => !(n in ctx.sized)).map((name) => ({ name, format })));
  const future = ctx.now.getTime() + FUTURE_DAYS * DAY;
  for (const from of [...own, ...named(FROM_PARAMS)]) {
    if (!emptyAnswer(await probeBody(ctx.get, { ...ctx.sized, [from.name]: boundText(future, from.format) }))) continue;
    let to: string | undefined;
    const uppers = [...own.filter((o) => o.name !== from.name && o.format === from.format), ...named(TO_PARAMS).map((t) => ({ ...t, format: from.format }))];
    // The upper bound named like the lower one first (updated_since → updated_until).
    const twin = TO_PARAMS[FROM_PARAMS.indexOf(from.name)];
    uppers.sort((a, b) => Number(b.name === twin) - Number(a.name === twin));
    for (const upper of uppers) {
      if (emptyAnswer(await probeBody(ctx.get, { ...ctx.sized, [upper.name]: boundText(PAST, from.format) }))) {
        to = upper.name;
        break;
      }
    }
    const evidence = `${from.name}=${boundText(future, from.format)} answers no records${to ? `, ${to}=${boundText(PAST, from.format)} none either` : ''}`;
    return { filter: { from_param: from.name, ...(to ? { to_param: to } : {}), format: from.format, evidence }, tried: '' };
  }
  return { tried: format === undefined && own.length === 0 ? 'the records hold no date to filter by' : `no date filter found (none of ${[...own.map((o) => o.name), ...named(FROM_PARAMS).map((n) => n.name)].join(', ')} with tomorrow as its bound answered no records)` };
}

/** One sample page: its records, or why it failed. */
async function readPage(get: GetJson, params: Record<string, string>, label: string): Promise<{ sample: HistorySampleSeen; records: unknown[] }> {
  try {
    const records = recordsOf(await get(params))?.records ?? [];
    return { sample: { label, records: records.length }, records };
  } catch (error) {
    const status = error instanceof SourceError && error.status !== undefined ? `HTTP ${error.status}` : (error as Error).message.slice(0, 120);
    return { sample: { label, error: status }, records: [] };
  }
}

const listed = (items: readonly string[]): string => (items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`);

/** The first page of each window of the history, by the list's date filter. */
async function windows(ctx: HistoryContext, filter: DateFilterSeen): Promise<Read> {
  const now = ctx.now.getTime();
  const steps: HistoryRead['steps'] = [];
  const samples: HistorySampleSeen[] = [];
  let newer = 0;
  for (const days of HISTORY_DAYS) {
    const params: Record<string, string> = { ...ctx.sized, [filter.from_param]: boundText(now - days * DAY, filter.format) };
    if (filter.to_param) params[filter.to_param] = boundText(now - newer * DAY, filter.format);
    const label = filter.to_param ? (newer === 0 ? `the last ${days} days` : `${newer}-${days} days back`) : `since ${days} days back`;
    const read = await readPage(ctx.get, params, label);
    samples.push(read.sample);
    if (read.sample.error === undefined) steps.push({ label, records: read.records });
    newer = days;
  }
  const by = filter.to_param ? `${filter.from_param}/${filter.to_param}` : filter.from_param;
  const where = `on the first ${ctx.walked.pages} page(s) and the first page of each ${by} window (${listed(samples.map((s) => s.label))})`;
  const failed = samples.filter((s) => s.error !== undefined);
  return { seen: { spread: 'windows', where, samples, filter, ...(failed.length > 0 ? { incomplete: `${listed(failed.map((s) => `the window ${s.label}`))} failed (${failed.map((s) => s.error).join(', ')})` } : {}) }, steps };
}

/** Pages at positions spread over a list paged by numbers or offsets. */
async function positions(ctx: HistoryContext): Promise<Read> {
  const p = ctx.pagination;
  const size = ctx.walked.pageSize;
  const first = p.first_page ?? 1;
  const paramsAt = (index: number): Record<string, string> => (p.type === 'page' ? { ...ctx.sized, [p.page_param as string]: String(first + index) } : { ...ctx.sized, [p.offset_param as string]: String(index * size) });
  const labelAt = (index: number): string => (p.type === 'page' ? `page ${first + index}` : `offset ${index * size}`);
  const found: { index: number; label: string; records: unknown[] }[] = [];
  const samples: HistorySampleSeen[] = [];
  let incomplete: string | undefined;
  let where: string;
  if (ctx.total !== undefined) {
    const last = Math.max(0, Math.ceil(ctx.total / size) - 1);
    const left = Array.from({ length: Math.max(0, last - ctx.walked.pages + 1) }, (_, i) => ctx.walked.pages + i);
    const indices = left.length <= POSITIONS ? left : [...new Set([1, 2, 3, 4].map((q) => Math.floor((last * q) / POSITIONS)))].filter((i) => i >= ctx.walked.pages);
    for (const index of indices) {
      const read = await readPage(ctx.get, paramsAt(index), `${labelAt(index)}${index === last ? ' (the last)' : ''}`);
      samples.push(read.sample);
      if (read.sample.error === undefined) found.push({ index, label: read.sample.label, records: read.records });
    }
    const failed = samples.filter((s) => s.error !== undefined);
    if (failed.length > 0) incomplete = `${listed(failed.map((s) => s.label))} failed (${failed.map((s) => s.error).join(', ')})`;
    where = `on the first ${ctx.walked.pages} page(s) and ${listed(samples.map((s) => s.label))} of ${last + 1} pages (total ${ctx.total})`;
    if (left.length <= POSITIONS && incomplete === undefined) return { seen: { spread: 'whole', where: `in the whole list (${ctx.total} records, every page read)`, samples }, steps: found };
  } else {
    // No total: jump ahead (four times as deep each time) until a page is empty, then halve back towards the end.
    let lo = ctx.walked.pages - 1;
    let hi: number | undefined;
    const prints = new Set([JSON.stringify(ctx.walked.records.slice(-size))]);
    for (let probes = 0; probes < END_PROBES && (hi === undefined || hi - lo > 1); probes++) {
      const index = hi === undefined ? (lo + 1) * 4 - 1 : Math.floor((lo + hi) / 2);
      const body = await probeBody(ctx.get, paramsAt(index)).catch((error: unknown) => ({ failed: error }));
      if (isObject(body) && 'failed' in body) {
        const status = body.failed instanceof SourceError && body.failed.status !== undefined ? `HTTP ${body.failed.status}` : String((body.failed as Error).message).slice(0, 120);
        samples.push({ label: labelAt(index), error: status });
        incomplete = `${labelAt(index)} failed (${status})`;
        break;
      }
      const records = body === undefined ? [] : (recordsOf(body)?.records ?? []);
      // An empty page, a refused one, or the last page answered again for a number past it: past the end.
      const print = JSON.stringify(records);
      if (records.length === 0 || prints.has(print)) {
        hi = index;
        samples.push({ label: labelAt(index), records: 0 });
        continue;
      }
      prints.add(print);
      lo = index;
      samples.push({ label: labelAt(index), records: records.length });
      found.push({ index, label: labelAt(index), records });
    }
    if (incomplete === undefined && hi === undefined) incomplete = `the end of the list was not reached (${labelAt(lo)} still holds records)`;
    const end = hi === undefined ? '' : hi - lo === 1 ? `; the list ends at ${labelAt(lo)}` : `; the list ends between ${labelAt(lo)} and ${labelAt(hi)}`;
    where = `on the first ${ctx.walked.pages} page(s) and ${listed(samples.filter((s) => (s.records ?? 0) > 0).map((s) => s.label)) || 'no other page'} (no total: ${samples.map((s) => s.label).join(', ')} asked${end})`;
  }
  found.sort((a, b) => a.index - b.index);
  return { seen: { spread: 'positions', where, samples, ...(incomplete ? { incomplete } : {}) }, steps: found.map(({ label, records }) => ({ label, records })) };
}

/** The history sample of a list whose first pages were walked. */
export async function readHistory(ctx: HistoryContext): Promise<HistoryRead> {
  const firstPages = { label: `the first ${ctx.walked.pages} page(s)`, records: ctx.walked.records };
  if (ctx.walked.whole) return { seen: { spread: 'whole', where: `in the whole list (${ctx.walked.records.length} records, read to its end)`, samples: [] }, steps: [firstPages], added: [] };
  const { filter, tried } = await findDateFilter(ctx);
  const read = filter !== undefined ? await windows(ctx, filter) : ctx.pagination.type === 'page' || ctx.pagination.type === 'offset' ? await positions(ctx) : undefined;
  if (read === undefined) {
    const why = ctx.pagination.type === 'cursor' ? 'token pages cannot be jumped ahead' : 'no paging was found';
    return { seen: { spread: 'none', where: `on the first ${ctx.walked.pages} page(s)`, samples: [], incomplete: `older records could not be reached: ${tried}, and ${why}` }, steps: [firstPages], added: [] };
  }
  const steps = [firstPages, ...read.steps];
  // Each record once: what every page brought that no page before it did.
  const seen = new Set<string>();
  const added: unknown[] = [];
  steps.forEach((step, i) => {
    let fresh = 0;
    for (const record of step.records) {
      const key = JSON.stringify(record);
      if (seen.has(key)) continue;
      seen.add(key);
      fresh += 1;
      if (i > 0) added.push(record);
    }
    const sample = read.seen.samples.find((s) => s.label === step.label);
    if (sample !== undefined) sample.added = fresh;
  });
  return { seen: read.seen, steps, added };
}

/**
 * Marks each field holding a short list of values with where the list comes from: `history`
 * when it is shown complete (the whole list, or every planned page read and the last page that
 * brought records not read before brought no new value of the field), else `sample`, with why.
 */
export function markValueSets(fields: FieldProfile[], read: HistoryRead): void {
  const { seen } = read;
  const codes = fields.filter((f) => f.distinct !== undefined);
  if (seen.spread === 'whole') {
    for (const f of codes) Object.assign(f, { distinct_from: 'history', distinct_note: seen.where });
    return;
  }
  // Per page of the history, the values of the records it brought first.
  const known = new Set<string>();
  const steps = read.steps.map((step) => {
    const values = new Map<string, Set<string>>();
    for (const record of step.records) {
      const key = JSON.stringify(record);
      if (!isObject(record) || known.has(key)) continue;
      known.add(key);
      for (const [name, value] of leaves(record)) {
        if (value === null || value === undefined) continue;
        const set = values.get(name) ?? new Set<string>();
        set.add(JSON.stringify(value));
        values.set(name, set);
      }
    }
    return { label: step.label, values };
  });
  for (const f of codes) {
    let last = -1;
    steps.forEach((s, i) => {
      if (i > 0 && (s.values.get(f.name)?.size ?? 0) > 0) last = i;
    });
    const before = new Set(steps.slice(0, Math.max(1, last)).flatMap((s) => [...(s.values.get(f.name) ?? [])]));
    const added = last < 0 ? [] : [...(steps[last]?.values.get(f.name) ?? [])].filter((v) => !before.has(v));
    const why = seen.incomplete
      ?? (last < 0 ? `no page beyond the first ones brought a record with a value of ${f.name} not read before` : added.length > 0 ? `the set was still growing: ${steps[last]?.label}, the last page with records not read before, added ${added.join(', ')}` : undefined);
    if (why === undefined) Object.assign(f, { distinct_from: 'history', distinct_note: `${seen.where}; the set stopped growing (${steps[last]?.label}, the last page with records not read before, added no value)` });
    else Object.assign(f, { distinct_from: 'sample', distinct_note: `${seen.where}; ${why}` });
  }
}
