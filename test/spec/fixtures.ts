/** Records and helpers shared by the spec tests. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { Io } from '../../src/cli/io.js';
import { mulberry32 } from '../../src/kernel/prng.js';
import type { Entity, SpecRecord, Variant } from '../../src/types.js';

/** A valid record with every field of its schema, per variant and entity. */
export const FULL: Record<Variant, Record<Entity, SpecRecord>> = {
  igaming: {
    customers: {
      customer_id: 'c-1001',
      signup_date: '2024-05-01T12:00:00Z',
      affiliate_id: 'aff-7',
      last_modified_date: '2024-05-02T08:30:00.250+02:00',
      campaign_id: 'spring-24',
      click_id: 'clk-9f8e',
      lang_id: 'en',
      country_code: 'DE',
      kyc_status_id: 'approved',
      sales_status_id: 'new',
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: 'ada@example.com',
    },
    transactions: {
      transaction_id: 'tx-1',
      customer_id: 'c-1001',
      transaction_type: 'deposit',
      amount_currency: 100.5,
      currency: 'EUR',
      transaction_date: '2024-05-01T12:05:00Z',
      status: 'approved',
      amount_usd: 108.54,
      transaction_subtype: 'card',
      note: 'first deposit',
    },
    activity: {
      date: '2024-05-01',
      customer_id: 'c-1001',
      game_type: 'slots',
      currency: 'EUR',
      bets_count: 120,
      total_bets: 250.5,
      wins: 200.25,
      ggr: 50.25,
      ngr: 45,
    },
  },
  'prop-trading': {
    customers: {
      customer_id: 'acc-5001',
      signup_date: '2024-05-01T12:00:00Z',
      affiliate_id: 'aff-7',
      last_modified_date: '2024-05-02T08:30:00Z',
      campaign_id: 'spring-24',
      click_id: 'clk-9f8e',
      lang_id: 'de',
      country_code: 'AT',
      kyc_status_id: 'pending',
      sales_status_id: 'trial',
      first_name: 'Grace',
      last_name: 'Hopper',
      email: 'grace@example.com',
      challenge_type: 'standard',
      phase: 'phase_1',
      account_size: 100000,
    },
    transactions: {
      transaction_id: 'tx-9',
      customer_id: 'acc-5001',
      transaction_type: 'challenge_fee',
      amount_currency: 549,
      currency: 'USD',
      transaction_date: '2024-05-01T12:05:00Z',
      status: 'approved',
      amount_usd: 549,
      transaction_subtype: 'phase_1_fee',
      note: 'promo code SPRING',
    },
    activity: {
      date: '2024-05-01',
      customer_id: 'acc-5001',
      instrument: 'EURUSD',
      lots_traded: 12.5,
      pnl: -340.75,
      currency: 'USD',
      drawdown: 2.5,
      max_drawdown: 6.25,
    },
  },
};

/** The required fields per variant and entity, as the spec's tables list them. */
export const REQUIRED: Record<Variant, Record<Entity, string[]>> = {
  igaming: {
    customers: ['customer_id', 'signup_date', 'affiliate_id'],
    transactions: ['transaction_id', 'customer_id', 'transaction_type', 'amount_currency', 'currency', 'transaction_date', 'status'],
    activity: ['date', 'customer_id', 'game_type', 'currency'],
  },
  'prop-trading': {
    customers: ['customer_id', 'signup_date', 'affiliate_id'],
    transactions: ['transaction_id', 'customer_id', 'transaction_type', 'amount_currency', 'currency', 'transaction_date', 'status'],
    activity: ['date', 'customer_id', 'instrument', 'lots_traded', 'pnl', 'currency'],
  },
};

/** The record with only its required fields. */
export function minimal(variant: Variant, entity: Entity): SpecRecord {
  const full = FULL[variant][entity];
  return Object.fromEntries(REQUIRED[variant][entity].map((field) => [field, full[field]]));
}

/** An Io that keeps what a command writes. */
export interface CapturedIo extends Io {
  stdout: string[];
  stderr: string[];
}

export function captureIo(stdinText = ''): CapturedIo {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return {
    stdout,
    stderr,
    out: (text) => stdout.push(text),
    err: (text) => stderr.push(text),
    stdin: Readable.from([Buffer.from(stdinText)]),
    isTty: false,
  };
}

/** A temporary folder for one suite; `write` puts a file in it, `remove` deletes it all. */
export function tempDir(): { path: string; write(name: string, content: string | Buffer): string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), 'partner-sync-spec-'));
  return {
    path,
    write(name, content) {
      const file = join(path, name);
      writeFileSync(file, content);
      return file;
    },
    remove() {
      rmSync(path, { recursive: true, force: true });
    },
  };
}

/** A small seeded PRNG (mulberry32) for property tests that must be repeatable. */
export const seededRandom = (seed: number): (() => number) => mulberry32(seed);
