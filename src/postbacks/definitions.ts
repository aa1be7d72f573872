/**
 * Postback definitions: per affiliate, optionally per campaign, for a set of event kinds; GET
 * with macros in the URL, or POST with a JSON body. Checked whole when added (URL, scheme,
 * macros, personal data, destination), so a definition in the store is one that can be sent.
 * Removing one keeps its row (its event log stays readable) and settles its unsent events.
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { Store } from '../store/store.js';
import { fromStoreTimestamp } from '../store/values.js';
import { checkDestination } from './destination.js';
import { EVENT_KINDS, isEventKind, MACROS, macrosOf, PERSONAL_FIELDS, type EventKind } from './events.js';
import { deriveSecret, newSalt } from './secret.js';

export const METHODS = ['GET', 'POST'] as const;
export type Method = (typeof METHODS)[number];
export const DEFAULT_RATE_PER_SECOND = 10;

export interface PostbackDefinition {
  id: string;
  affiliateId: string;
  campaignId: string | null;
  events: EventKind[];
  method: Method;
  url: string;
  includePersonal: boolean;
  allowPrivate: boolean;
  ratePerSecond: number;
  secretSalt: string;
  createdAt: string;
  removedAt: string | null;
  /** Paused by a manager: nothing delivered until resumed. */
  pausedAt: string | null;
}

export interface NewPostback {
  affiliate: string;
  campaign?: string;
  events: string;
  method?: string;
  url: string;
  includePersonal?: boolean;
  allowPrivate?: boolean;
  ratePerSecond?: number;
}

/** A definition that cannot be added: `field` names what is wrong. */
export class PostbackDefinitionError extends Error {
  constructor(readonly field: string, message: string) {
    super(`${field}: ${message}`);
    this.name = 'PostbackDefinitionError';
  }
}

export function toDefinition(row: Record<string, unknown>): PostbackDefinition {
  return {
    id: String(row.id),
    affiliateId: String(row.affiliate_id),
    campaignId: row.campaign_id === null || row.campaign_id === undefined ? null : String(row.campaign_id),
    events: String(row.events).split(',').filter(isEventKind),
    method: String(row.method) as Method,
    url: String(row.url),
    includePersonal: Number(row.include_personal) === 1,
    allowPrivate: Number(row.allow_private) === 1,
    ratePerSecond: Number(row.rate_per_second),
    secretSalt: String(row.secret_salt),
    createdAt: fromStoreTimestamp(row.created_at) ?? '',
    removedAt: fromStoreTimestamp(row.removed_at),
    pausedAt: fromStoreTimestamp(row.paused_at ?? null),
  };
}

/** Parses and checks a new definition; the first problem is thrown with its field. */
export async function checkNewPostback(input: NewPostback): Promise<Omit<PostbackDefinition, 'id' | 'secretSalt' | 'createdAt' | 'removedAt' | 'pausedAt'>> {
  const affiliate = input.affiliate.trim();
  if (affiliate === '') throw new PostbackDefinitionError('affiliate', 'is empty');
  const campaign = input.campaign?.trim();
  if (campaign !== undefined && campaign === '') throw new PostbackDefinitionError('campaign', 'is empty');
  const kinds = input.events.split(',').map((e) => e.trim()).filter((e) => e !== '');
  if (kinds.length === 0) throw new PostbackDefinitionError('events', `name at least one of ${EVENT_KINDS.join(', ')}`);
  for (const k of kinds) if (!isEventKind(k)) throw new PostbackDefinitionError('events', `unknown event ${JSON.stringify(k)}; known events: ${EVENT_KINDS.join(', ')}`);
  const method = (input.method ?? 'GET').toUpperCase();
  if (!(METHODS as readonly string[]).includes(method)) throw new PostbackDefinitionError('method', `must be GET or POST, got ${JSON.stringify(input.method)}`);
  const rate = input.ratePerSecond ?? DEFAULT_RATE_PER_SECOND;
  if (!Number.isInteger(rate) || rate < 1 || rate > 1000) throw new PostbackDefinitionError('rate', `must be a whole number of requests per second from 1 to 1000, got ${rate}`);
  const includePersonal = input.includePersonal === true;

  const macros = macrosOf(input.url);
  for (const m of macros) {
    if (!(MACROS as readonly string[]).includes(m)) throw new PostbackDefinitionError('url', `unknown macro {${m}}; known macros: ${MACROS.map((x) => `{${x}}`).join(' ')}`);
    if ((PERSONAL_FIELDS as readonly string[]).includes(m) && !includePersonal) {
      throw new PostbackDefinitionError('url', `macro {${m}} is personal data: it is sent only with --include-personal`);
    }
  }
  let url: URL;
  try {
    // Macros stand in the URL as placeholders: the URL must parse with them filled.
    url = new URL(input.url.replace(/\{[a-z_]+\}/g, 'x'));
  } catch {
    throw new PostbackDefinitionError('url', `not a valid URL: ${JSON.stringify(input.url)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new PostbackDefinitionError('url', `must be http:// or https://, got ${url.protocol}`);
  if (url.username || url.password) throw new PostbackDefinitionError('url', 'must not carry a user name or password (the request is signed instead)');
  if (macrosOf(url.host).length > 0 || /\{/.test(input.url.split('/')[2] ?? '')) throw new PostbackDefinitionError('url', 'macros may not stand in the host');
  const problem = await checkDestination(url, input.allowPrivate === true);
  if (problem) throw new PostbackDefinitionError('url', problem);
  return {
    affiliateId: affiliate, campaignId: campaign ?? null, events: [...new Set(kinds)] as EventKind[], method: method as Method, url: input.url,
    includePersonal, allowPrivate: input.allowPrivate === true, ratePerSecond: rate,
  };
}

/** Adds a checked definition; returns it with its secret (shown once, never stored). */
export async function addPostback(store: Store, input: NewPostback, secretKey: string): Promise<{ postback: PostbackDefinition; secret: string }> {
  const checked = await checkNewPostback(input);
  const postback: PostbackDefinition = { ...checked, id: `pb_${randomBytes(6).toString('hex')}`, secretSalt: newSalt(), createdAt: store.now(), removedAt: null, pausedAt: null };
  await store.knex('postbacks').insert({
    id: postback.id, affiliate_id: postback.affiliateId, campaign_id: postback.campaignId, events: postback.events.join(','), method: postback.method,
    url: postback.url, include_personal: postback.includePersonal ? 1 : 0, allow_private: postback.allowPrivate ? 1 : 0,
    rate_per_second: postback.ratePerSecond, secret_salt: postback.secretSalt, created_at: postback.createdAt,
  });
  return { postback, secret: deriveSecret(secretKey, postback.secretSalt) };
}

/** Definitions, the removed ones too when asked, oldest first. */
export async function listPostbacks(knex: Knex, filter: { affiliate?: string; removed?: boolean } = {}): Promise<PostbackDefinition[]> {
  const q = knex('postbacks').select('*').orderBy([{ column: 'created_at' }, { column: 'id' }]);
  if (filter.affiliate) q.where('affiliate_id', filter.affiliate);
  if (!filter.removed) q.whereNull('removed_at');
  return ((await q) as Record<string, unknown>[]).map(toDefinition);
}

export async function getPostback(knex: Knex, id: string): Promise<PostbackDefinition | undefined> {
  const row = (await knex('postbacks').where('id', id).first()) as Record<string, unknown> | undefined;
  return row ? toDefinition(row) : undefined;
}

/** Removes a definition: no new events; its unsent ones end dead ("postback removed"). False when there is none. */
export async function removePostback(store: Store, id: string): Promise<{ removed: boolean; settled: number }> {
  return store.transaction(async (trx) => {
    const now = store.now();
    const n = await trx('postbacks').where('id', id).whereNull('removed_at').update({ removed_at: now });
    if (n === 0) return { removed: false, settled: 0 };
    const settled = await trx('postback_events').where('postback_id', id).whereIn('state', ['pending', 'retrying'])
      .update({ state: 'dead', last_error: 'the postback was removed', lease_until: null, lease_token: null });
    return { removed: true, settled };
  });
}

/** The live definitions that want events of these affiliates (read in the caller's transaction). */
export async function definitionsFor(db: Knex, affiliates?: Iterable<string>): Promise<PostbackDefinition[]> {
  const q = db('postbacks').whereNull('removed_at').select('*');
  if (affiliates) {
    const list = [...new Set(affiliates)];
    if (list.length === 0) return [];
    // Definitions are few; the affiliates of a batch can be many: filter here when they are.
    if (list.length <= 500) q.whereIn('affiliate_id', list);
  }
  return ((await q) as Record<string, unknown>[]).map(toDefinition);
}

/** Pauses (or resumes) a postback's delivery; false when there is no such live postback. */
export async function setPostbackPaused(store: Store, id: string, paused: boolean): Promise<boolean> {
  const n = await store.knex('postbacks').where('id', id).whereNull('removed_at').update({ paused_at: paused ? store.now() : null });
  return Number(n) > 0;
}
