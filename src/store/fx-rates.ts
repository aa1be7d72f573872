/**
 * FX rates into the store: the CSV files of `partner-sync fx import` parsed (every problem with
 * its line), and the rates written, a day's rate replaced only by a new file's. The conversion
 * itself, and reading the rates a run needs, is src/kernel/fx.ts.
 */
import type { Knex } from 'knex';
import { isDay } from '../kernel/dates.js';
import { money, type Money } from '../kernel/money.js';
import { dialectOf } from './dialect/index.js';
import { append } from '../kernel/collections.js';

export interface FxRate {
  currency: string;
  date: string;
  rate: Money;
}

export interface RatesFileProblem {
  /** 1-based line of the file. */
  line: number;
  message: string;
}

const HEADER = ['date', 'currency', 'rate'];

/**
 * A rates CSV: a header naming the columns date, currency, rate (any order; other columns are
 * ignored), then one rate per line: `2026-11-02,EUR,1.0734` means one EUR was worth 1.0734 USD that day.
 */
export function parseRatesCsv(text: string): { rates: FxRate[]; problems: RatesFileProblem[] } {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const problems: RatesFileProblem[] = [];
  const rates: FxRate[] = [];
  const headerAt = lines.findIndex((l) => l.trim() !== '');
  if (headerAt < 0) return { rates, problems: [{ line: 1, message: 'the file is empty; expected a header date,currency,rate' }] };
  const header = (lines[headerAt] as string).split(',').map((h) => h.trim().toLowerCase());
  const index = Object.fromEntries(HEADER.map((name) => [name, header.indexOf(name)])) as Record<string, number>;
  const absent = HEADER.filter((name) => index[name] === -1);
  if (absent.length > 0) return { rates, problems: [{ line: headerAt + 1, message: `the header must name the columns date, currency, rate; missing ${absent.join(', ')} (got ${header.join(',')})` }] };

  const seen = new Map<string, { line: number; rate: Money }>();
  for (let i = headerAt + 1; i < lines.length; i++) {
    const raw = lines[i] as string;
    if (raw.trim() === '') continue;
    const cells = raw.split(',').map((c) => c.trim());
    const line = i + 1;
    const date = cells[index.date as number] ?? '';
    const currency = cells[index.currency as number] ?? '';
    const rateText = cells[index.rate as number] ?? '';
    const before = problems.length;
    if (!isDay(date)) problems.push({ line, message: `date must be a real day YYYY-MM-DD, got ${JSON.stringify(date)}` });
    if (!/^[A-Z]{3}$/.test(currency)) problems.push({ line, message: `currency must be an ISO 4217 code such as EUR, got ${JSON.stringify(currency)}` });
    if (!/^\d+(\.\d+)?$/.test(rateText) || money(rateText).isZero()) {
      problems.push({ line, message: `rate must be a positive decimal number (USD per one ${currency || 'unit'}), got ${JSON.stringify(rateText)}` });
    } else if (money(rateText).precision(true) > 15) {
      problems.push({ line, message: `rate has more than 15 significant digits: ${rateText}` });
    }
    if (problems.length > before) continue;
    const rate = money(rateText);
    if (currency === 'USD' && !rate.equals(1)) {
      problems.push({ line, message: `the rate of USD is 1 by definition, got ${rateText}` });
      continue;
    }
    const key = `${currency} ${date}`;
    const earlier = seen.get(key);
    if (earlier) {
      if (!earlier.rate.equals(rate)) problems.push({ line, message: `${currency} ${date} already has rate ${earlier.rate.toFixed()} on line ${earlier.line}; one rate per currency and day` });
      continue;
    }
    seen.set(key, { line, rate });
    rates.push({ currency, date, rate });
  }
  return { rates, problems };
}

export interface RatesImport {
  added: number;
  changed: number;
  unchanged: number;
  /** Rates that replaced a different rate: every record converted with the old one must move. */
  replaced: FxRate[];
}

/** Upserts rates in the caller's transaction; reports which ones are new or changed. */
export async function saveRates(trx: Knex.Transaction, rates: readonly FxRate[], source: string, now: string): Promise<RatesImport> {
  const result: RatesImport = { added: 0, changed: 0, unchanged: 0, replaced: [] };
  const existing = new Map<string, Money>();
  const byCurrency = new Map<string, string[]>();
  for (const r of rates) append(byCurrency, r.currency, r.date);
  const dialect = dialectOf(trx);
  for (const [currency, days] of byCurrency) {
    for (const part of dialect.chunks(days, 500)) {
      const rows: { date: string; rate: string }[] = await trx('fx_rates').where('currency', currency).whereIn('date', part).select('date', 'rate');
      for (const row of rows) existing.set(`${currency} ${String(row.date).slice(0, 10)}`, money(row.rate));
    }
  }
  const write: FxRate[] = [];
  for (const r of rates) {
    const old = existing.get(`${r.currency} ${r.date}`);
    if (old === undefined) result.added += 1;
    else if (old.equals(r.rate)) {
      result.unchanged += 1;
      continue;
    } else {
      result.changed += 1;
      result.replaced.push(r);
    }
    write.push(r);
  }
  for (const part of dialect.insertChunks(write.map((r) => ({ currency: r.currency, date: r.date, rate: r.rate.toFixed(), source, loaded_at: now })))) {
    await trx('fx_rates')
      .insert(part)
      .onConflict(['currency', 'date'])
      .merge(['rate', 'source', 'loaded_at']);
  }
  return result;
}
