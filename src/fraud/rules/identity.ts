/**
 * duplicate_identity (docs/fraud.md): the customers sharing an identity key (e-mail, click id, or
 * a rare name in one country signed up close together).
 */
import type { Knex } from 'knex';
import { ts, chunked, type CustomerRow } from '../facts.js';
import type { Finding } from '../flags.js';
import { append } from '../../kernel/collections.js';
import { dialectOf } from '../../store/dialect/index.js';
import { finding, key, type Ctx } from './unit.js';

export interface Member { customer_id: string; affiliate_id: string; signup_date: string }

/**
 * Members of identity keys (kind, value) → customers, with their affiliates: one indexed query per
 * kind (per 500 values on SQLite). `known`: customers whose rows the caller read in the same
 * transaction (the evaluated ones), not read again. `shared`: only the keys at least two customers
 * share (what duplicate_identity can flag, min_accounts being 2 or more); a key of one customer is
 * left out as if it had none (a bulk group's keys are mostly one customer's each: a month's 47,000
 * rows read for a few hundred shared keys).
 */
export async function identityMembers(db: Knex | Knex.Transaction, partner: string, keys: readonly string[],
  known: ReadonlyMap<string, { row: Pick<CustomerRow, 'affiliate_id' | 'signup_date'> }> = new Map(), options: { shared?: boolean } = {}): Promise<Map<string, Member[]>> {
  const out = new Map<string, Member[]>();
  const byKind = new Map<string, string[]>();
  for (const k of keys) { const [kind, value] = JSON.parse(k) as [string, string]; append(byKind, kind, value); }
  const rows: Record<string, string>[] = [];
  for (const [kind, values] of byKind) {
    rows.push(...(await chunked(db, values, { form: 'inList' }, (c) => {
      const q = db('fraud_identities').where({ partner_id: partner, kind }).modify(dialectOf(db).inList('value', c));
      if (!options.shared) return q.select('kind', 'value', 'customer_id') as Promise<Record<string, string>[]>;
      // One customer per (partner, customer, kind): the count is of customers.
      return db.from(q.select('kind', 'value', 'customer_id', db.raw('count(*) OVER (PARTITION BY value) AS n')).as('k'))
        .where('n', '>=', 2).select('kind', 'value', 'customer_id') as Promise<Record<string, string>[]>;
    })));
  }
  const records = new Map<string, { affiliate_id: string; signup_date: string }>();
  const others = new Set<string>();
  for (const r of rows) {
    const k = known.get(r.customer_id!);
    if (k) records.set(r.customer_id!, { affiliate_id: k.row.affiliate_id, signup_date: k.row.signup_date });
    else others.add(r.customer_id!);
  }
  for (const m of await chunked(db, [...others], { form: 'inList' }, (c) => db('customers').where('partner_id', partner).modify(dialectOf(db).inList('customer_id', c)).select('customer_id', 'affiliate_id', 'signup_date') as Promise<Record<string, unknown>[]>)) {
    records.set(String(m.customer_id), { affiliate_id: String(m.affiliate_id), signup_date: ts(m.signup_date) });
  }
  for (const r of rows) {
    const record = records.get(r.customer_id!);
    if (record === undefined) continue;
    const k = key(r.kind!, r.value!);
    const list = out.get(k) ?? [];
    list.push({ customer_id: r.customer_id!, ...record });
    out.set(k, list);
  }
  for (const list of out.values()) list.sort((a, b) => (a.customer_id < b.customer_id ? -1 : 1));
  return out;
}

/**
 * The closest two signups of these customers, in hours (undefined for fewer than two). A shared
 * name + country is a link only when two accounts were opened close together.
 */
function closestSignups(members: readonly Member[]): { hours: number; customers: [string, string] } | undefined {
  const sorted = [...members].sort((a, b) => (a.signup_date < b.signup_date ? -1 : a.signup_date > b.signup_date ? 1 : a.customer_id < b.customer_id ? -1 : 1));
  let best: { hours: number; customers: [string, string] } | undefined;
  for (let i = 1; i < sorted.length; i++) {
    const hours = (Date.parse(sorted[i]!.signup_date) - Date.parse(sorted[i - 1]!.signup_date)) / 3_600_000;
    if (!best || hours < best.hours) best = { hours, customers: [sorted[i - 1]!.customer_id, sorted[i]!.customer_id] };
  }
  return best;
}

/**
 * duplicate_identity: one identity key shared by at least min_accounts customers. An e-mail or a
 * click id is one person (or one click) unless more than click_max_accounts carry it (a tracker's
 * fault); a first + last name + country is only a weak signal: it
 * flags when the name is rare in the partner's customers (at most name_max_accounts carry it)
 * and two of them signed up within name_within_hours of each other.
 */
export function duplicateIdentity(ctx: Ctx, identity: string, members: readonly Member[]): Finding[] {
  const s = ctx.settings.duplicate_identity;
  if (members.length < s.min_accounts) return [];
  const [kind, value] = JSON.parse(identity) as [string, string];
  let link: Record<string, unknown> = {};
  // One click registers one account, or a person's two or three; a click id on many accounts is
  // the tracker's (a macro left unfilled, a constant sent for every visitor), not anyone's.
  if (kind === 'click' && members.length > s.click_max_accounts) return [];
  if (kind === 'name') {
    if (members.length > s.name_max_accounts) return [];
    const closest = closestSignups(members);
    if (!closest || !(closest.hours <= s.name_within_hours)) return [];
    link = { closest_signups_hours: closest.hours.toFixed(2), closest_signups: closest.customers, name_max_accounts: s.name_max_accounts, name_within_hours: s.name_within_hours };
  }
  const affiliates = [...new Set(members.map((m) => m.affiliate_id))].sort();
  return [finding(ctx, 'duplicate_identity', identity, affiliates.length === 1 ? affiliates[0]! : null, affiliates.length > 1 ? 'high' : 'medium', members.map((m) => m.customer_id), {
    key: kind, value, accounts: members.length, affiliates, customers: members.map((m) => ({ customer_id: m.customer_id, affiliate_id: m.affiliate_id })), ...link,
  })];
}
