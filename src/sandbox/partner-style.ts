/**
 * The sandbox's partner style (`partner-sync sandbox --style partner`): the same data served the
 * way many real partners send it, not in the spec's names and units, so that onboarding a partner
 * (discover, init, a few edits, backfill, reconcile) can be rehearsed end to end:
 *
 * - camelCase names of their own (playerId, signupTime, amountCents, statusCode, gameCategory...);
 * - numeric ids (igc-000123 → 123; igt-000123-004 → 123004);
 * - business times as epoch milliseconds (signupTime, createdAt); change stamps (lastUpdate,
 *   updatedAt) stay ISO 8601 text, written with a +00:00 offset;
 * - amounts in cents (amountCents, betsCents, ...), the USD amount as a decimal string;
 * - codes: transaction types as short codes (DEP, WDR, BON, ADJ...), statuses and KYC states as
 *   numbers (statusCode 1..4, kycStatus 0..2).
 *
 * Prop trading goes further, as many trading platforms do: the customer is a `traderId`, change
 * stamps too are epoch milliseconds (and the window filters modified_since/updated_since take epoch
 * milliseconds), account sizes are in thousands (`accountSizeK`: 25 for 25,000) and phases are
 * stage codes (P1, P2, F, X).
 *
 * Filters, sorting and pagination are the spec style's (modified_since, updated_since, date,
 * cursor, page): only the records change. `toPartnerStyle` is also what the partner-style replica
 * (src/onboarding/partner-replica.ts) is written from.
 */
import { Decimal } from 'decimal.js';
import type { Entity, SpecRecord, Variant } from '../types.js';

export type SandboxStyle = 'spec' | 'partner';

/** Spec field → partner field name, per entity (fields not listed: their camelCase name). */
export const PARTNER_NAMES: Record<Entity, Record<string, string>> = {
  customers: {
    customer_id: 'playerId',
    signup_date: 'signupTime',
    affiliate_id: 'affiliateCode',
    last_modified_date: 'lastUpdate',
    lang_id: 'language',
    country_code: 'country',
    kyc_status_id: 'kycStatus',
    sales_status_id: 'salesStage',
    email: 'emailAddress',
    account_size: 'accountSizeK',
    phase: 'stage',
    challenge_type: 'plan',
  },
  transactions: {
    transaction_id: 'txId',
    customer_id: 'playerId',
    transaction_type: 'type',
    amount_currency: 'amountCents',
    currency: 'currencyCode',
    transaction_date: 'createdAt',
    status: 'statusCode',
    amount_usd: 'usdAmount',
    transaction_subtype: 'method',
    note: 'comment',
    updated_at: 'updatedAt',
  },
  activity: {
    date: 'day',
    customer_id: 'playerId',
    game_type: 'gameCategory',
    currency: 'currencyCode',
    bets_count: 'betCount',
    total_bets: 'betsCents',
    wins: 'winsCents',
    ggr: 'ggrCents',
    ngr: 'ngrCents',
    lots_traded: 'lotsX100',
    pnl: 'pnlCents',
    drawdown: 'drawdownCents',
    max_drawdown: 'maxDrawdownCents',
  },
};

/** The partner's codes. */
export const PARTNER_CODES = {
  transaction_type: { deposit: 'DEP', withdrawal: 'WDR', bonus: 'BON', adjustment: 'ADJ', other: 'OTH', challenge_fee: 'FEE', payout: 'PAYOUT', reset_fee: 'RESET', refund: 'REFUND' } as Record<string, string>,
  status: { pending: 1, approved: 2, declined: 3, reversed: 4 } as Record<string, number>,
  kyc_status_id: { pending: 0, approved: 1, rejected: 2 } as Record<string, number>,
  phase: { phase_1: 'P1', phase_2: 'P2', funded: 'F', failed: 'X' } as Record<string, string>,
};

const IDS = new Set(['customer_id', 'transaction_id']);
const EPOCH_MILLIS = new Set(['signup_date', 'transaction_date']);
const CHANGE_STAMPS = new Set(['last_modified_date', 'updated_at']);
const CENTS = new Set(['amount_currency', 'total_bets', 'wins', 'ggr', 'ngr', 'pnl', 'drawdown', 'max_drawdown', 'lots_traded']);
const THOUSANDS = new Set(['account_size']);
/** Prop trading: the customer's own name, per entity. */
const PROP_NAMES: Record<string, string> = { customer_id: 'traderId' };
const DECIMAL_TEXT = new Set(['amount_usd']);

const camel = (name: string): string => name.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

/** A spec id with digits (igc-000123, igt-000123-004) → the partner's number. */
export function numericId(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const digits = value.replace(/\D/g, '');
  return digits === '' ? value : Number(digits);
}

function epochMillis(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? value : ms;
}

function withOffset(value: unknown): unknown {
  return typeof value === 'string' ? value.replace(/Z$/, '+00:00') : value;
}

function cents(value: unknown): unknown {
  if (typeof value !== 'number') return value;
  const times = new Decimal(String(value)).times(100);
  return times.isInteger() ? times.toNumber() : value;
}

function thousands(value: unknown): unknown {
  if (typeof value !== 'number') return value;
  const k = new Decimal(String(value)).dividedBy(1000);
  return k.toNumber();
}

/** One spec record as the partner sends it. */
export function toPartnerStyle(entity: Entity, record: Readonly<SpecRecord>, variant: Variant = 'igaming'): Record<string, unknown> {
  const prop = variant === 'prop-trading';
  const names = prop ? { ...PARTNER_NAMES[entity], ...PROP_NAMES } : PARTNER_NAMES[entity];
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(record)) {
    let v: unknown = value;
    if (v !== null && v !== undefined) {
      if (IDS.has(field)) v = numericId(v);
      else if (EPOCH_MILLIS.has(field)) v = epochMillis(v);
      else if (CHANGE_STAMPS.has(field)) v = prop ? epochMillis(v) : withOffset(v);
      else if (CENTS.has(field)) v = cents(v);
      else if (THOUSANDS.has(field)) v = thousands(v);
      else if (DECIMAL_TEXT.has(field) && typeof v === 'number') v = new Decimal(String(v)).toFixed(2);
      else if (field in PARTNER_CODES) {
        const codes = PARTNER_CODES[field as keyof typeof PARTNER_CODES];
        if (typeof v === 'string' && Object.hasOwn(codes, v)) v = codes[v];
      }
    }
    out[names[field] ?? camel(field)] = v;
  }
  return out;
}

/** The records of a list reply of `path` (/api/v1/{variant}/{entity}) in partner style; other replies unchanged. */
export function partnerStyleBody(path: string, body: unknown): unknown {
  const match = /^\/api\/v1\/(igaming|prop-trading)\/(customers|transactions|activity)$/.exec(path);
  if (match === null || typeof body !== 'object' || body === null || !Array.isArray((body as { data?: unknown }).data)) return body;
  const entity = match[2] as Entity;
  const variant = match[1] as Variant;
  const envelope = body as { data: SpecRecord[] };
  return { ...envelope, data: envelope.data.map((r) => toPartnerStyle(entity, r, variant)) };
}

const WINDOW_PARAMS = ['modified_since', 'modified_until', 'updated_since', 'updated_until', 'from', 'to'];

/**
 * The query of a prop-trading list request in partner style: window bounds given in epoch
 * milliseconds (as its change stamps are) read as the instants they are; other queries unchanged.
 */
export function partnerStyleQuery(path: string, query: URLSearchParams): URLSearchParams {
  if (!/^\/api\/v1\/prop-trading\/(customers|transactions)$/.test(path)) return query;
  const out = new URLSearchParams(query);
  for (const name of WINDOW_PARAMS) {
    const value = out.get(name);
    if (value !== null && /^\d{10,14}$/.test(value)) out.set(name, new Date(Number(value)).toISOString());
  }
  return out;
}
