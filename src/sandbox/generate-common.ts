/**
 * What the two variants' generators share: the time range, reference tables (countries, FX rates,
 * names, affiliates) and the helpers that turn random draws into spec-shaped values.
 */
import type { SpecRecord } from '../types.js';
import { MICROS_PER_DAY, formatMicros } from './instant.js';
import type { Random } from './prng.js';

/** The range and seed every generated customer is drawn from. */
export interface GenerationContext {
  seed: number;
  /** First and last day (day numbers, both inclusive) of signups and activity. */
  fromDay: number;
  toDay: number;
  /** Microseconds since the epoch: the start of fromDay, and the end of toDay (exclusive). */
  startMicros: number;
  endMicros: number;
}

export function generationContext(seed: number, fromDay: number, toDay: number): GenerationContext {
  return {
    seed,
    fromDay,
    toDay,
    startMicros: fromDay * MICROS_PER_DAY,
    endMicros: (toDay + 1) * MICROS_PER_DAY,
  };
}

/** One customer's records, as generated. Transactions carry `updated_at` besides the spec fields. */
export interface GeneratedCustomer {
  customer: SpecRecord;
  transactions: SpecRecord[];
  activity: SpecRecord[];
}

export interface Country {
  code: string;
  lang: string;
  currency: string;
  weight: number;
}

export const COUNTRIES: readonly Country[] = [
  { code: 'DE', lang: 'de', currency: 'EUR', weight: 14 },
  { code: 'GB', lang: 'en', currency: 'GBP', weight: 14 },
  { code: 'CA', lang: 'en', currency: 'CAD', weight: 10 },
  { code: 'SE', lang: 'sv', currency: 'SEK', weight: 6 },
  { code: 'FI', lang: 'fi', currency: 'EUR', weight: 5 },
  { code: 'NO', lang: 'no', currency: 'NOK', weight: 5 },
  { code: 'IE', lang: 'en', currency: 'EUR', weight: 4 },
  { code: 'AT', lang: 'de', currency: 'EUR', weight: 4 },
  { code: 'NL', lang: 'nl', currency: 'EUR', weight: 6 },
  { code: 'ES', lang: 'es', currency: 'EUR', weight: 6 },
  { code: 'IT', lang: 'it', currency: 'EUR', weight: 5 },
  { code: 'BR', lang: 'pt', currency: 'BRL', weight: 8 },
  { code: 'MX', lang: 'es', currency: 'MXN', weight: 4 },
  { code: 'NZ', lang: 'en', currency: 'NZD', weight: 3 },
  { code: 'JP', lang: 'ja', currency: 'JPY', weight: 3 },
  { code: 'US', lang: 'en', currency: 'USD', weight: 8 },
];

/** USD per unit of each currency: fixed, so amount_usd is reproducible. */
export const USD_RATE: Readonly<Record<string, number>> = {
  USD: 1,
  EUR: 1.08,
  GBP: 1.27,
  CAD: 0.73,
  SEK: 0.095,
  NOK: 0.093,
  BRL: 0.18,
  MXN: 0.055,
  NZD: 0.6,
  JPY: 0.0067,
};

/** Currencies without minor units (amounts are whole numbers). */
const ZERO_DECIMAL = new Set(['JPY']);

/**
 * Names with the long tail of a real population: a few common names and very many rare ones. A
 * pool of a few dozen names would make two customers with the same first + last name + country
 * certain among thousands, which no real player base shows (and fraud detection's name key would
 * flag strangers). A name is built from syllables by its rank; the rank is drawn with one random
 * draw u as floor(N × u²), so rank k has a share ∝ 1/√k: the most common of 900 first names is
 * about 1.7 % of customers, the most common of 27,000 last names about 0.3 % (as in national
 * name statistics), and a random pair of customers shares a full name with a chance of about 2e-7.
 */
const SYLLABLES = ['an', 'be', 'ca', 'da', 'el', 'fi', 'go', 'ha', 'is', 'jo', 'ka', 'li', 'mo', 'na', 'or', 'pe', 'ra', 'si', 'ta', 'ul', 'va', 'wi', 'ya', 'zo', 'mar', 'len', 'tin', 'son', 'berg', 'ric'];
const FIRST_NAME_COUNT = SYLLABLES.length ** 2;
const LAST_NAME_COUNT = SYLLABLES.length ** 3;

function nameOfRank(rank: number, parts: number): string {
  let n = rank;
  let name = '';
  for (let i = 0; i < parts; i++) {
    name += SYLLABLES[n % SYLLABLES.length];
    n = Math.floor(n / SYLLABLES.length);
  }
  return name.charAt(0).toUpperCase() + name.slice(1);
}

/** A name of a long-tailed population of `count` names, from one uniform draw. */
const longTailName = (u: number, count: number, parts: number): string => nameOfRank(Math.min(count - 1, Math.floor(count * u * u)), parts);

export const AFFILIATES: readonly string[] = Array.from({ length: 12 }, (_unused, i) => `aff-${101 + i}`);
const CAMPAIGNS = ['spring-promo', 'welcome-100', 'vip-launch', 'seo-brand', 'social-q4', 'streamer-x'];

/** Amounts to 2 decimal places as the nearest double (String() then shows at most 2 decimals). */
export function round2(value: number): number {
  const rounded = Math.round(value * 100) / 100;
  return Object.is(rounded, -0) ? 0 : rounded;
}

/** An amount in a currency: 2 decimals, or whole units for zero-decimal currencies. */
export function roundAmount(value: number, currency: string): number {
  if (!ZERO_DECIMAL.has(currency)) return round2(value);
  const rounded = Math.round(value);
  return Object.is(rounded, -0) ? 0 : rounded;
}

export function toUsd(amount: number, currency: string): number {
  return round2(amount * (USD_RATE[currency] ?? 1));
}

/** A converted amount: `usd` in the currency, rounded as the currency is. */
export function fromUsd(usd: number, currency: string): number {
  return roundAmount(usd / (USD_RATE[currency] ?? 1), currency);
}

/**
 * A date-time as partners send them: mostly milliseconds, about one in four with microseconds.
 * `micros` is truncated to the chosen precision so that the text and the number agree.
 */
export function stamp(rng: Random, micros: number): string {
  return formatMicros(micros, rng.chance(0.25) ? 'us' : 'ms');
}

/** A uniformly random instant in [start, end) in microseconds, with every microsecond digit random. */
export function randomMicros(rng: Random, start: number, end: number): number {
  const seconds = Math.max(1, Math.floor((end - start) / 1_000_000));
  const at = start + rng.int(0, seconds - 1) * 1_000_000 + rng.int(0, 999_999);
  return Math.min(at, end - 1);
}

/** Microseconds of a duration given in seconds, with random sub-second digits. */
export function seconds(rng: Random, min: number, max: number): number {
  return Math.floor(rng.float(min, max) * 1_000_000) + rng.int(0, 999);
}

/** The instant `hour`:00:00.000000Z of the day after `micros`: a nightly batch job's run. */
export function nextBatchRun(micros: number, hour: number): number {
  const day = Math.floor(micros / MICROS_PER_DAY);
  return (day + 1) * MICROS_PER_DAY + hour * 3_600_000_000;
}

/** The personal and attribution fields of a customer; optional ones are sometimes left out. */
export function customerProfile(rng: Random, index: number, country: Country): SpecRecord {
  const first = longTailName(rng.next(), FIRST_NAME_COUNT, 2);
  const last = longTailName(rng.next(), LAST_NAME_COUNT, 3);
  const affiliate = rng.pick(AFFILIATES);
  const profile: SpecRecord = { affiliate_id: affiliate };
  if (rng.chance(0.8)) profile.campaign_id = `${affiliate}-${rng.pick(CAMPAIGNS)}`;
  if (rng.chance(0.7)) profile.click_id = `clk-${rng.int(0, 0xffffff).toString(16).padStart(6, '0')}${index.toString(16)}`;
  if (rng.chance(0.9)) profile.lang_id = country.lang;
  if (rng.chance(0.95)) profile.country_code = country.code;
  if (rng.chance(0.85)) {
    profile.first_name = first;
    profile.last_name = last;
  }
  if (rng.chance(0.85)) profile.email = `${first}.${last}${index}@example.com`.toLowerCase();
  return profile;
}

export function pickCountry(rng: Random): Country {
  return rng.weighted(COUNTRIES.map((c) => [c, c.weight] as const));
}

/** The day number of an instant in microseconds. */
export function dayOfMicros(micros: number): number {
  return Math.floor(micros / MICROS_PER_DAY);
}

export type Status = 'approved' | 'pending' | 'declined' | 'reversed';

/**
 * When a transaction's status was last set: pending ones were just written; approvals are quick,
 * except withdrawals, often approved by the nightly settlement batch (ties in updated_at);
 * reversals come days later. A change that would fall after the range has not happened yet.
 */
export function settle(rng: Random, ctx: GenerationContext, at: number, status: Status, batchHour?: number): { status: Status; at: number } {
  let changed: number;
  switch (status) {
    case 'pending':
      return { status, at };
    case 'approved':
      changed = batchHour !== undefined && rng.chance(0.7) ? nextBatchRun(at, batchHour) : at + seconds(rng, 0.05, 5);
      break;
    case 'declined':
      changed = at + seconds(rng, 1, 90);
      break;
    case 'reversed':
      changed = at + seconds(rng, 86_400, 5 * 86_400);
      break;
  }
  return changed < ctx.endMicros ? { status, at: changed } : { status: 'pending', at };
}
