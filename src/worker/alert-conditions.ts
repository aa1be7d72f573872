/**
 * The conditions the worker reads from the store at each minute's check (docs/worker.md, Alerts):
 * what is true now, for the alert router to start and end. The freshness monitor, the scheduled
 * reconcile, the FX feed and the store outage report their own (src/alerts/router.ts).
 *
 * - run_failed: the latest `thresholds.run_failures` finished runs of a scheduled stream all failed.
 * - run_held: the latest finished run was stopped by the reject-rate guard or the day guard
 *   (jobs/reject-guard.ts, jobs/day-guard.ts: their errors name `max_reject_ratio` or a refused day).
 * - postbacks_dead: postback events of the partner's customers that are dead (retries spent) on a
 *   postback still in place.
 * - unevaluated: records loaded but not evaluated by the after-load jobs for longer than
 *   `thresholds.unevaluated_minutes`.
 * - fx_rate_missing: commission entries held for a currency's rate of a day, once
 *   `thresholds.fx_rate_by` (UTC) of that day has passed.
 * - deletes_held: deletes the mass-delete guard holds, waiting for a decision.
 */
import type { Knex } from 'knex';
import { toUtcTimestamp } from '../kernel/timestamp.js';
import type { Thresholds } from '../alerts/config.js';
import type { Condition } from '../alerts/message.js';
import { listHolds as commissionHolds } from '../commission/ledger.js';
import type { Redact } from '../log.js';
import { listHolds as deleteHolds } from '../store/delete-holds.js';
import { unevaluated } from '../store/unevaluated.js';
import type { AlertKind } from '../alerts/config.js';

/** The kinds read here: the router ends those of them no longer true. */
export const STORE_CONDITION_KINDS: readonly AlertKind[] = ['run_failed', 'run_held', 'postbacks_dead', 'unevaluated', 'fx_rate_missing', 'deletes_held'];

const GUARD_STOP = /more than max_reject_ratio|day replacement refused|not replaced: .* dated outside/;
const iso = (v: unknown): string => (v instanceof Date ? v.toISOString() : v === null || v === undefined ? 'unknown' : toUtcTimestamp(String(v)));
const firstLine = (text: string, max = 300): string => {
  const line = text.split('\n')[0] ?? '';
  return line.length > max ? `${line.slice(0, max)}…` : line;
};

export interface ConditionInputs {
  streams: readonly { partner: string; stream: string }[];
  thresholds: Thresholds;
  now: Date;
  redact: Redact;
}

async function runConditions(knex: Knex, o: ConditionInputs): Promise<Condition[]> {
  const out: Condition[] = [];
  const n = o.thresholds.runFailures;
  for (const { partner, stream } of o.streams) {
    const runs = (await knex('runs').where({ partner_id: partner, stream, kind: 'run' }).whereNot('status', 'running')
      .orderBy('started_at', 'desc').limit(Math.max(n, 1)).select('status', 'error', 'finished_at')) as { status: string; error: string | null; finished_at: unknown }[];
    const latest = runs[0];
    if (latest === undefined || latest.status !== 'failed') continue;
    const error = o.redact(firstLine(latest.error ?? 'no error recorded'));
    if (runs.length >= n && runs.every((r) => r.status === 'failed')) {
      out.push({ kind: 'run_failed', partner, stream, detail: `the last ${n} run(s) failed, the latest at ${iso(latest.finished_at)}: ${error}` });
    }
    if (GUARD_STOP.test(latest.error ?? '')) out.push({ kind: 'run_held', partner, stream, detail: `the latest run (${iso(latest.finished_at)}) was stopped and nothing of its window replaced: ${error}` });
  }
  return out;
}

async function postbackConditions(knex: Knex): Promise<Condition[]> {
  // Events of a removed postback are dead by the removal (src/postbacks/definitions.ts), not by a failing tracker: not news.
  const rows = (await knex('postback_events').where('state', 'dead').whereIn('postback_id', knex('postbacks').whereNull('removed_at').select('id'))
    .select('partner_id').count({ n: '*' }).min({ oldest: 'last_attempt_at' }).groupBy('partner_id')) as { partner_id: string | null; n: unknown; oldest: unknown }[];
  return rows.map((r) => ({
    kind: 'postbacks_dead' as const,
    partner: r.partner_id ?? '-',
    stream: '-',
    detail: `${Number(r.n)} postback event(s) dead (every retry failed), the oldest last tried ${iso(r.oldest)}; the affiliates' trackers did not get them`,
  }));
}

async function unevaluatedConditions(knex: Knex, o: ConditionInputs): Promise<Condition[]> {
  return (await unevaluated(knex, o.now)).filter((u) => u.age_seconds * 1000 > o.thresholds.unevaluatedMs).map((u) => ({
    kind: 'unevaluated' as const,
    partner: u.partner,
    stream: '-',
    detail: `loaded but not evaluated for ${Math.round(u.age_seconds / 60)} min (more than ${Math.round(o.thresholds.unevaluatedMs / 60_000)}): ${u.fraud_customers} customer(s) for the fraud rules, ${u.commission_entries} commission scope entries, the report facts of ${u.report_days} day(s)`,
  }));
}

async function fxConditions(knex: Knex, o: ConditionInputs): Promise<Condition[]> {
  const [hh, mm] = o.thresholds.fxRateBy.split(':').map(Number) as [number, number];
  const byPartner = new Map<string, { entries: number; rates: Set<string> }>();
  for (const h of await commissionHolds(knex)) {
    const due = h.missing.filter((m) => {
      const day = m.split(' ')[1];
      if (day === undefined) return false;
      const by = Date.parse(`${day}T00:00:00Z`) + (hh * 60 + mm) * 60_000;
      return Number.isFinite(by) && o.now.getTime() >= by;
    });
    if (due.length === 0) continue;
    const p = byPartner.get(h.partner_id) ?? { entries: 0, rates: new Set<string>() };
    p.entries += 1;
    for (const m of due) p.rates.add(m);
    byPartner.set(h.partner_id, p);
  }
  return [...byPartner].map(([partner, p]) => {
    const rates = [...p.rates].sort();
    return { kind: 'fx_rate_missing' as const, partner, stream: '-', detail: `${p.entries} commission entr${p.entries === 1 ? 'y' : 'ies'} held waiting for ${rates.length} FX rate(s) past ${o.thresholds.fxRateBy} UTC of their day: ${rates.slice(0, 6).join(', ')}${rates.length > 6 ? ', ...' : ''}` };
  });
}

async function deleteConditions(knex: Knex): Promise<Condition[]> {
  const byStream = new Map<string, { partner: string; entity: string; holds: number[]; records: number }>();
  for (const h of await deleteHolds(knex, { state: 'held' })) {
    const key = `${h.partner}/${h.entity}`;
    const s = byStream.get(key) ?? { partner: h.partner, entity: h.entity, holds: [], records: 0 };
    s.holds.push(h.id);
    s.records += h.ids.length;
    byStream.set(key, s);
  }
  return [...byStream.values()].map((s) => ({ kind: 'deletes_held' as const, partner: s.partner, stream: s.entity, detail: `${s.records} ${s.entity} delete(s) held in hold(s) ${s.holds.join(', ')}: nothing is deleted until someone applies or discards them` }));
}

/** Every condition of STORE_CONDITION_KINDS true now. */
export async function storeConditions(knex: Knex, o: ConditionInputs): Promise<Condition[]> {
  return [
    ...(await runConditions(knex, o)),
    ...(await postbackConditions(knex)),
    ...(await unevaluatedConditions(knex, o)),
    ...(await fxConditions(knex, o)),
    ...(await deleteConditions(knex)),
  ];
}
