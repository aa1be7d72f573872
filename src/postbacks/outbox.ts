/**
 * The outbox: facts become events in the transaction of the change that causes them, so an
 * event exists exactly when its change committed (none lost on a crash, none sent for a change
 * that rolled back). One row per (postback, fact); the UNIQUE (postback_id, fact_key) and an
 * insert that ignores conflicts make a fact fire once, whatever loads it again.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { PostbackDefinition } from './definitions.js';
import { PERSONAL_FIELDS, type Fact } from './events.js';
import { append } from '../kernel/collections.js';
import { dialectOf } from '../store/dialect/index.js';

/** Rows per INSERT: 15 columns each, far below both stores' bind limits. */
const CHUNK = 200;

function wants(def: PostbackDefinition, fact: Fact): boolean {
  if (def.affiliateId !== fact.values.affiliate_id || !def.events.includes(fact.kind)) return false;
  return def.campaignId === null || def.campaignId === (fact.values.campaign_id ?? null);
}

/** What a postback keeps of a fact's values: personal fields only when it includes them. */
function keptValues(def: PostbackDefinition, fact: Fact): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fact.values)) {
    if (v === null || v === undefined) continue;
    if (!def.includePersonal && (PERSONAL_FIELDS as readonly string[]).includes(k)) continue;
    out[k] = v;
  }
  return out;
}

/** Writes the events of these facts for every postback that wants them (a fact already written is ignored). */
export async function writeEvents(trx: Knex.Transaction, facts: readonly Fact[], definitions: readonly PostbackDefinition[], now: string): Promise<void> {
  if (facts.length === 0 || definitions.length === 0) return;
  const byAffiliate = new Map<string, PostbackDefinition[]>();
  for (const d of definitions) append(byAffiliate, d.affiliateId, d);
  const rows: Record<string, unknown>[] = [];
  for (const fact of facts) {
    for (const def of byAffiliate.get(fact.values.affiliate_id) ?? []) {
      if (!wants(def, fact)) continue;
      rows.push({
        event_id: randomUUID(), postback_id: def.id, fact_key: fact.key, kind: fact.kind, order_key: fact.orderKey,
        partner_id: fact.values.partner_id ?? null, customer_id: fact.values.customer_id ?? null, affiliate_id: fact.values.affiliate_id,
        data: JSON.stringify(keptValues(def, fact)), state: 'pending', attempts: 0, next_attempt_at: now, window_start: now, created_at: now,
      });
    }
  }
  for (const part of dialectOf(trx).chunks(rows, CHUNK)) await trx('postback_events').insert(part).onConflict(['postback_id', 'fact_key']).ignore();
}
