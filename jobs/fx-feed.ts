/**
 * The FX feed (docs/commissions.md, The FX feed): one read of a configured daily-rates source
 * (src/commission/fx-feed.ts parses it), retried, its rates written through the same path as
 * `fx import` (jobs/commission.ts importRates), so the held entries waiting for them are released
 * by the usual evaluation. Which days take a publication's rates:
 * - its own day;
 * - the days between the previous publication the feed wrote and this one (at most 7: a weekend,
 *   a holiday), which take the previous publication's rates, as the ECB advises for days without
 *   reference rates, unless they have a rate already;
 * - ECB only: when read on a Saturday or Sunday, the weekend days after the publication up to
 *   the day read (the ECB never publishes on them), written now rather than on Monday.
 * A read that fails (the network, an HTTP error, an answer that does not parse) writes nothing.
 */
import type { Plan } from '../src/commission/plans.js';
import { FeedError, parseFeed, usdRates, type FeedFormat, type Publication } from '../src/commission/fx-feed.js';
import { addDays, utcDay } from '../src/kernel/dates.js';
import { money } from '../src/kernel/money.js';
import type { Logger } from '../src/log.js';
import type { FxRate } from '../src/store/fx-rates.js';
import type { Store } from '../src/store/store.js';
import { importRates } from './commission.js';

export interface FxFeed {
  format: FeedFormat;
  url: string;
  /** Attempts after the first (default 3). */
  retries: number;
  /** Between attempts (default 60 s). */
  retryDelayMs: number;
}

export interface FeedDeps {
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  timeoutMs?: number;
}

export interface FeedResult {
  publication: string;
  /** Rates written per day (the publication's own and carried ones). */
  days: { date: string; rates: number; carriedFrom?: string }[];
  added: number;
  changed: number;
  released: number;
  lines: number;
  stillHeld: number;
  attempts: number;
}

const SOURCE = (format: FeedFormat, publication: string) => `feed:${format}:${publication}`;
const CARRIED = ' carried';
const MAX_GAP_DAYS = 7;

/** The answer's text, retried on a network error, a timeout, a 429 or a 5xx; another status fails at once. */
async function read(feed: FxFeed, deps: FeedDeps): Promise<{ text: string; attempts: number }> {
  const doFetch = deps.fetch ?? fetch;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  let last: Error | undefined;
  for (let attempt = 1; attempt <= feed.retries + 1; attempt++) {
    let retryable = true;
    try {
      const res = await doFetch(feed.url, { signal: AbortSignal.timeout(deps.timeoutMs ?? 30_000), headers: { accept: feed.format === 'ecb' ? 'application/xml, text/xml' : 'application/json' } });
      const text = await res.text();
      if (res.ok) return { text, attempts: attempt };
      last = new FeedError(`the feed answered HTTP ${res.status}`);
      retryable = res.status === 429 || res.status >= 500;
    } catch (error) {
      last = error instanceof Error ? error : new Error(String(error));
    }
    if (!retryable) throw last;
    if (attempt <= feed.retries) await sleep(feed.retryDelayMs);
  }
  throw new FeedError(`the feed could not be read after ${feed.retries + 1} attempt(s): ${last?.message ?? 'unknown error'}`);
}

/** The latest publication day before `day` the feed wrote, with its rates. */
async function previousPublication(store: Store, format: FeedFormat, day: string): Promise<{ date: string; rates: FxRate[] } | undefined> {
  const row = (await store.knex('fx_rates').where('source', 'like', `feed:${format}:%`).whereNot('source', 'like', `%${CARRIED}`).where('date', '<', day).max({ date: 'date' }).first()) as { date: unknown } | undefined;
  if (!row?.date) return undefined;
  const date = row.date instanceof Date ? row.date.toISOString().slice(0, 10) : String(row.date).slice(0, 10);
  const rows = (await store.knex('fx_rates').where({ source: SOURCE(format, date) }).where('date', date).select('currency', 'rate')) as { currency: string; rate: unknown }[];
  return { date, rates: rows.map((r) => ({ currency: r.currency, date, rate: money(String(r.rate)) })) };
}

/** The (currency, day) pairs of these days that have a rate already. */
async function existing(store: Store, days: readonly string[]): Promise<Set<string>> {
  if (days.length === 0) return new Set();
  const rows = (await store.knex('fx_rates').whereIn('date', [...days]).select('currency', 'date')) as { currency: string; date: unknown }[];
  return new Set(rows.map((r) => `${r.currency} ${r.date instanceof Date ? r.date.toISOString().slice(0, 10) : String(r.date).slice(0, 10)}`));
}

const weekend = (day: string): boolean => [0, 6].includes(new Date(`${day}T00:00:00Z`).getUTCDay());

/** The rates of a publication and of the days it covers, each with where it came from. */
async function ratesOf(store: Store, feed: FxFeed, p: Publication, today: string): Promise<{ rates: FxRate[]; source: Map<FxRate, string>; days: FeedResult['days'] }> {
  const source = new Map<FxRate, string>();
  const days: FeedResult['days'] = [];
  const own = usdRates(p);
  for (const r of own) source.set(r, SOURCE(feed.format, p.date));
  days.push({ date: p.date, rates: own.length });
  const carry = async (from: { date: string; rates: readonly FxRate[] }, targets: string[]) => {
    const have = await existing(store, targets);
    for (const day of targets) {
      const list = from.rates.filter((r) => !have.has(`${r.currency} ${day}`)).map((r) => ({ currency: r.currency, date: day, rate: r.rate }));
      for (const r of list) source.set(r, `${SOURCE(feed.format, from.date)}${CARRIED}`);
      if (list.length > 0) days.push({ date: day, rates: list.length, carriedFrom: from.date });
    }
  };
  const previous = await previousPublication(store, feed.format, p.date);
  if (previous) {
    const gap: string[] = [];
    for (let d = addDays(previous.date, 1); d < p.date; d = addDays(d, 1)) gap.push(d);
    if (gap.length <= MAX_GAP_DAYS) await carry(previous, gap);
  }
  if (feed.format === 'ecb') {
    const ahead: string[] = [];
    for (let d = addDays(p.date, 1); d <= today && weekend(d); d = addDays(d, 1)) ahead.push(d);
    if (ahead.length > 0 && ahead.at(-1) === today) await carry({ date: p.date, rates: own }, ahead);
  }
  return { rates: [...source.keys()], source, days: days.sort((a, b) => a.date.localeCompare(b.date)) };
}

/** Reads the feed once (with its retries) and writes its rates; what waited for them is evaluated. */
export async function fetchFxFeed(store: Store, plans: readonly Plan[], feed: FxFeed, logger: Logger, deps: FeedDeps = {}): Promise<FeedResult> {
  const { text, attempts } = await read(feed, deps);
  const publication = parseFeed(feed.format, text);
  const today = utcDay(store.now());
  if (publication.date > today) throw new FeedError(`the feed's rates are dated ${publication.date}, after today (${today} UTC)`);
  const { rates, source, days } = await ratesOf(store, feed, publication, today);
  const { saved, evaluations } = await importRates(store, plans, rates, (r) => source.get(r) as string, logger);
  return {
    publication: publication.date, days, added: saved.added, changed: saved.changed, attempts,
    released: evaluations.reduce((n, e) => n + e.released, 0), lines: evaluations.reduce((n, e) => n + e.lines, 0), stillHeld: evaluations.reduce((n, e) => n + e.held, 0),
  };
}
