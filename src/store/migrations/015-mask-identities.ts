/**
 * Migration 015's data step, frozen with it: identity keys stored in clear by earlier versions (a
 * normalized e-mail, `first|last|CC`) turned into the masked form with a digest, in
 * fraud_identities and in the duplicate_identity flags' instance keys and evidence. The key format
 * is the one of version 015, written out here: the live one (src/fraud/identity.ts) may change,
 * and that must not change what this migration does on a store that has not run it yet. The
 * decisions keep the evidence they were made on: fraud_decisions is append-only and not rewritten.
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';

const digest = (kind: string, value: string): string => createHash('sha256').update(`${kind}\u0000${value}`).digest('hex').slice(0, 24);

function maskEmail(normalized: string): string {
  const at = normalized.lastIndexOf('@');
  const local = normalized.slice(0, at);
  const masked = local.length <= 2 ? '*'.repeat(local.length) : `${local[0]}${'*'.repeat(local.length - 2)}${local[local.length - 1]}`;
  return `${masked}${normalized.slice(at)}`;
}

const emailKey = (normalized: string): string => `${maskEmail(normalized)}#${digest('email', normalized)}`;
const nameKey = (first: string, last: string, country: string): string => `${[...first][0] ?? ''}. ${[...last][0] ?? ''}. ${country}#${digest('name', `${first}|${last}|${country}`)}`;

function masked(kind: string, value: string): string | undefined {
  if (value.includes('#')) return undefined;
  if (kind === 'email') return emailKey(value);
  if (kind === 'name') {
    const [first, last, country] = value.split('|');
    return first && last && country ? nameKey(first, last, country) : undefined;
  }
  return undefined;
}

export async function maskStoredIdentities(knex: Knex | Knex.Transaction): Promise<{ identities: number; flags: number }> {
  let identities = 0;
  const rows: { partner_id: string; customer_id: string; kind: string; value: string }[] = await knex('fraud_identities').whereIn('kind', ['email', 'name']).select('partner_id', 'customer_id', 'kind', 'value');
  for (const r of rows) {
    const value = masked(r.kind, r.value);
    if (value === undefined) continue;
    await knex('fraud_identities').where({ partner_id: r.partner_id, customer_id: r.customer_id, kind: r.kind }).update({ value });
    identities += 1;
  }
  let flags = 0;
  const stored: { id: number; instance_key: string; evidence: string }[] = await knex('fraud_flags').where('rule', 'duplicate_identity').select('id', 'instance_key', 'evidence');
  for (const f of stored) {
    const [kind, value] = JSON.parse(f.instance_key) as [string, string];
    const next = masked(kind, value);
    if (next === undefined) continue;
    const evidence = JSON.parse(f.evidence) as Record<string, unknown>;
    if (evidence.value === value) evidence.value = next;
    await knex('fraud_flags').where('id', f.id).update({ instance_key: JSON.stringify([kind, next]), evidence: JSON.stringify(evidence) });
    flags += 1;
  }
  return { identities, flags };
}
