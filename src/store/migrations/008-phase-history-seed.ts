/**
 * Migration 008's seed, frozen with it: prop-trading customers stored before the phase history
 * existed get their stored phase as one observation, at its time (last_modified_date, else the
 * time the row was loaded), with the stages before it as `inferred` entries without a time, and
 * their funnel row. It reads the columns as the store held them at version 008 and writes the
 * rows as 008 defined them, so a later change to the live phase-history code (src/reports) cannot
 * change what this migration does on a store that has not run it yet.
 */
import { Decimal } from 'decimal.js';
import type { Knex } from 'knex';
import { toUtcTimestamp } from '../../kernel/timestamp.js';
import type { Clock } from '../../kernel/clock.js';

const STAGES = ['phase_1', 'phase_2', 'funded'] as const;
const PAGE = 500;
/** Rows per insert: 22 columns a funnel row keeps SQLite's and PostgreSQL's bind limits far off. */
const WRITE = 200;
const DAY_MS = 86_400_000;

const storedTime = (value: unknown): string | null => {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString().replace('Z', '000Z');
  return toUtcTimestamp(String(value));
};

const days = (from: string | null, to: string | null): number | null =>
  from === null || to === null ? null : (Date.parse(to.slice(0, 23) + 'Z') - Date.parse(from.slice(0, 23) + 'Z')) / DAY_MS;

const decimal = (value: unknown): string | null => {
  if (value === null || value === undefined) return null;
  const text = String(Number(value));
  return text.includes('e') ? new Decimal(text).toFixed() : text;
};

interface StoredCustomer {
  customer_id: string; affiliate_id: string; campaign_id: string | null; challenge_type: string | null; account_size: unknown;
  signup_date: unknown; last_modified_date: unknown; loaded_at: unknown; phase: string | null;
}

function seedRows(partner: string, c: StoredCustomer, now: string): { history: Record<string, unknown>[]; funnel: Record<string, unknown> } {
  const modified = storedTime(c.last_modified_date);
  const at = modified ?? (storedTime(c.loaded_at) as string);
  const source = modified ? 'last_modified_date' : 'loaded_at';
  const entry = (seq: number, phase: string, observed: string | null, time: string) =>
    ({ partner_id: partner, customer_id: c.customer_id, seq, phase, observed_at: observed, time_source: time, failed_from: null, run_id: 'migration-008', loaded_at: now });
  const history: Record<string, unknown>[] = [];
  const stage = STAGES.indexOf(c.phase as (typeof STAGES)[number]);
  if (c.phase === 'failed') history.push(entry(1, 'failed', at, source));
  else if (stage >= 0) {
    for (let i = 0; i < stage; i++) history.push(entry(i + 1, STAGES[i] as string, null, 'inferred'));
    history.push(entry(stage + 1, c.phase as string, at, source));
  }
  const signup = storedTime(c.signup_date) as string;
  const firstAt = (s: (typeof STAGES)[number]): string | null => (c.phase === s ? at : null);
  const reached = (s: (typeof STAGES)[number]): number => (stage >= STAGES.indexOf(s) ? 1 : 0);
  const last = history[history.length - 1];
  return {
    history,
    funnel: {
      partner_id: partner, customer_id: c.customer_id, affiliate_id: c.affiliate_id, campaign_id: c.campaign_id ?? null,
      challenge_type: c.challenge_type ?? null, account_size: decimal(c.account_size),
      signup_date: signup, signup_day: signup.slice(0, 10), cohort: signup.slice(0, 7),
      current_phase: last ? last.phase : null, last_seq: history.length,
      reached_phase_1: reached('phase_1'), reached_phase_2: reached('phase_2'), reached_funded: reached('funded'),
      phase_1_at: firstAt('phase_1'), phase_2_at: firstAt('phase_2'), funded_at: firstAt('funded'),
      failed_stage: c.phase === 'failed' ? 'unknown' : null,
      days_signup_phase_1: days(signup, firstAt('phase_1')), days_phase_1_phase_2: null, days_phase_2_funded: null,
      updated_at: now,
    },
  };
}

/** Seeds phase_history and funnel_customers from the stored prop-trading customers. */
export async function seedPhaseHistory008(db: Knex, clock: Clock): Promise<void> {
  const now = clock().toISOString().replace('Z', '000Z');
  const partners = (await db('partners').where('variant', 'prop-trading').select('partner_id')) as { partner_id: string }[];
  for (const { partner_id: partner } of partners) {
    let after = '';
    for (;;) {
      const rows = (await db('customers').where('partner_id', partner).andWhere('customer_id', '>', after).orderBy('customer_id').limit(PAGE)
        .select('customer_id', 'affiliate_id', 'campaign_id', 'challenge_type', 'account_size', 'signup_date', 'last_modified_date', 'loaded_at', 'phase')) as StoredCustomer[];
      if (rows.length === 0) break;
      after = String(rows[rows.length - 1]?.customer_id);
      const seeded = rows.map((c) => seedRows(partner, c, now));
      const history = seeded.flatMap((s) => s.history);
      const funnel = seeded.map((s) => s.funnel);
      for (let i = 0; i < history.length; i += WRITE) await db('phase_history').insert(history.slice(i, i + WRITE));
      for (let i = 0; i < funnel.length; i += WRITE) await db('funnel_customers').insert(funnel.slice(i, i + WRITE));
    }
  }
}
