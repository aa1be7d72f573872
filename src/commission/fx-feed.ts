/**
 * Daily FX rates from a published feed (docs/commissions.md, The FX feed), into the store's rates
 * (USD per one unit of a currency per UTC day, src/store/fx-rates.ts):
 * - `ecb`: the European Central Bank's daily reference rates (eurofxref-daily.xml: `<Cube
 *   time="YYYY-MM-DD">` holding `<Cube currency="USD" rate="1.0550"/>`, one EUR in each currency);
 * - `json`: `{ "base": "EUR", "date": "YYYY-MM-DD", "rates": { "USD": 1.055, "GBP": 0.8412 } }`,
 *   one unit of `base` in each currency (base USD needs no USD rate).
 * One unit of C is worth rates[USD] / rates[C] USD (base USD: 1 / rates[C]); the base itself is
 * worth rates[USD]. Quotients are cut to 12 significant digits.
 *
 * Which days take a publication's rates is jobs/fx-feed.ts's. A feed that cannot be read or
 * parsed writes nothing; no rate is made up from anything but a publication.
 */
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { isDay } from '../kernel/dates.js';
import { money, type Money } from '../kernel/money.js';
import type { FxRate } from '../store/fx-rates.js';

export type FeedFormat = 'ecb' | 'json';

/** One publication: its day and one unit of `base` in each currency. */
export interface Publication {
  date: string;
  base: string;
  rates: Map<string, Money>;
}

export class FeedError extends Error {}

const CODE = /^[A-Z]{3}$/;
const DECIMAL = /^\d+(\.\d+)?([eE][-+]?\d+)?$/;

function rateOf(currency: string, text: string): Money {
  if (!CODE.test(currency)) throw new FeedError(`currency ${JSON.stringify(currency)} is not an ISO 4217 code`);
  if (!DECIMAL.test(text) || money(text).isZero()) throw new FeedError(`the rate of ${currency} is not a positive number: ${JSON.stringify(text)}`);
  return money(text);
}

/** The ECB's eurofxref-daily.xml: the one dated Cube and its currency Cubes. */
export function parseEcb(text: string): Publication {
  const dated = [...text.matchAll(/<Cube\s+time\s*=\s*["'](\d{4}-\d{2}-\d{2})["']\s*>/g)];
  if (dated.length !== 1) throw new FeedError(`expected one <Cube time="YYYY-MM-DD"> in the ECB answer, found ${dated.length}`);
  const date = dated[0]?.[1] as string;
  if (!isDay(date)) throw new FeedError(`the ECB answer's time ${JSON.stringify(date)} is not a real day`);
  const rates = new Map<string, Money>();
  for (const m of text.matchAll(/<Cube\s+currency\s*=\s*["']([^"']*)["']\s+rate\s*=\s*["']([^"']*)["']\s*\/>/g)) rates.set(m[1] as string, rateOf(m[1] as string, m[2] as string));
  if (!text.trimEnd().endsWith('>') || !/<\/gesmes:Envelope>\s*$|<\/Envelope>\s*$/.test(text)) throw new FeedError('the ECB answer is cut short (no closing Envelope)');
  if (rates.size === 0) throw new FeedError('the ECB answer holds no rate');
  return { date, base: 'EUR', rates };
}

/** `{ base, date, rates }`. */
export function parseJsonFeed(text: string): Publication {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw new FeedError(`the answer is not JSON: ${(error as Error).message}`);
  }
  const b = body as { base?: unknown; date?: unknown; rates?: unknown };
  if (typeof body !== 'object' || body === null || typeof b.base !== 'string' || !CODE.test(b.base)) throw new FeedError('the answer has no base currency (`base`: an ISO 4217 code)');
  if (typeof b.date !== 'string' || !isDay(b.date)) throw new FeedError('the answer has no `date` (YYYY-MM-DD)');
  if (typeof b.rates !== 'object' || b.rates === null || Array.isArray(b.rates)) throw new FeedError('the answer has no `rates` object');
  const rates = new Map<string, Money>();
  for (const [currency, value] of Object.entries(b.rates as Record<string, unknown>)) {
    if (typeof value !== 'number' && typeof value !== 'string') throw new FeedError(`the rate of ${currency} is not a number`);
    rates.set(currency, rateOf(currency, String(value)));
  }
  if (rates.size === 0) throw new FeedError('the answer holds no rate');
  return { date: b.date, base: b.base, rates };
}

export function parseFeed(format: FeedFormat, text: string): Publication {
  return format === 'ecb' ? parseEcb(text) : parseJsonFeed(text);
}

const cut = (value: Money): Money => money(value.toSignificantDigits(12).toFixed());

/** A publication as the store's rates of `day`: USD per one unit of every currency it names (and of its base). */
export function usdRates(p: Publication, day = p.date): FxRate[] {
  const usdPerBase = p.base === 'USD' ? money(1) : p.rates.get('USD');
  if (usdPerBase === undefined) throw new FeedError(`the ${p.base}-based rates of ${p.date} hold no USD rate: nothing can be converted to USD`);
  const out: FxRate[] = [];
  if (p.base !== 'USD') out.push({ currency: p.base, date: day, rate: cut(usdPerBase) });
  for (const [currency, perBase] of p.rates) {
    if (currency === 'USD' || currency === p.base) continue;
    out.push({ currency, date: day, rate: cut(usdPerBase.dividedBy(perBase)) });
  }
  return out.sort((a, b) => a.currency.localeCompare(b.currency));
}


/** config/fx-feed.yaml as read (docs/commissions.md, The FX feed). */
export interface FeedConfig {
  format: FeedFormat;
  url: string;
  /** Daily, UTC: HH:MM. */
  at: string;
  retries: number;
  retryDelayMs: number;
}

/** The feed's settings, or every problem with its key. */
export function parseFeedConfig(data: unknown, file: string, insecure: (url: string) => string | undefined): { config?: FeedConfig; errors: string[] } {
  const errors: string[] = [];
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return { errors: [`${file}: expected keys format, url, at`] };
  const d = data as Record<string, unknown>;
  for (const key of Object.keys(d)) if (!['format', 'url', 'at', 'retries', 'retry_delay_seconds'].includes(key)) errors.push(`${file}: ${key}: unknown key; allowed: format, url, at, retries, retry_delay_seconds`);
  if (d.format !== 'ecb' && d.format !== 'json') errors.push(`${file}: format: ecb (the ECB's eurofxref-daily.xml) or json ({base, date, rates}), got ${JSON.stringify(d.format)}`);
  if (typeof d.url !== 'string' || d.url === '') errors.push(`${file}: url: the feed's URL is required`);
  else {
    const reason = insecure(d.url);
    if (reason) errors.push(`${file}: url: ${reason}`);
  }
  const at = d.at === undefined ? '16:30' : String(d.at);
  if (!/^([01]\d|2[0-3]):[0-5]\d$/.test(at)) errors.push(`${file}: at: the daily time, UTC, HH:MM, got ${JSON.stringify(d.at)}`);
  const retries = d.retries === undefined ? 3 : d.retries;
  if (!Number.isInteger(retries) || (retries as number) < 0 || (retries as number) > 20) errors.push(`${file}: retries: a whole number 0..20, got ${JSON.stringify(d.retries)}`);
  const delay = d.retry_delay_seconds === undefined ? 60 : d.retry_delay_seconds;
  if (typeof delay !== 'number' || delay < 0 || delay > 3600) errors.push(`${file}: retry_delay_seconds: 0..3600, got ${JSON.stringify(d.retry_delay_seconds)}`);
  if (errors.length > 0) return { errors };
  return { config: { format: d.format as FeedFormat, url: d.url as string, at, retries: retries as number, retryDelayMs: (delay as number) * 1000 }, errors };
}

/** config/fx-feed.yaml, or undefined when the file is absent (no feed: rates come by `fx import`). */
export async function loadFeedConfig(file: string, insecure: (url: string) => string | undefined): Promise<{ config?: FeedConfig; errors: string[] }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { errors: [] };
    return { errors: [`${file}: ${(error as Error).message}`] };
  }
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (error) {
    return { errors: [`${file}: ${(error as Error).message.split('\n')[0]}`] };
  }
  return parseFeedConfig(data, file, insecure);
}
