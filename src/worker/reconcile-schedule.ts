/**
 * The worker's scheduled reconcile: for every partner whose definition has a `reconcile` key, on
 * its cron schedule (UTC), `reconcile` over the last `days` closed UTC days; a difference is an
 * error event `reconcile_difference` in the log and a POST to the alert webhook, naming the days
 * and entities that differ. One worker at a time runs a partner's reconcile (a lock per partner,
 * as stream runs have), and a tick missed while a reconcile ran is not made up.
 */
import { utcDay } from '../../jobs/windows.js';
import { addDays } from '../kernel/dates.js';
import type { PartnerDefinition } from '../config/definition.js';
import type { Logger, Redact } from '../log.js';
import type { Store } from '../store/store.js';
import type { Alerter } from './alert.js';
import { parseCron } from './cron.js';
import type { StreamLocks } from '../store/stream-locks.js';
import type { TimerHandle, Timers } from './timers.js';
import { reconcile, type Reconciliation } from '../onboarding/reconcile.js';
import { inferredLines, type InferredDeletes } from '../../jobs/infer-deletes.js';

export interface ReconcileScheduleOptions {
  store: Store;
  timers: Timers;
  logger: Logger;
  redact: Redact;
  locks: StreamLocks;
  alerter?: Alerter;
  definitions: () => readonly PartnerDefinition[];
  /**
   * Turns what this scan and the previous one agree the source no longer has into deletes
   * (jobs/infer-deletes.ts), for partners whose `reconcile.infer_deletes` is on (the default).
   */
  inferDeletes?: (def: PartnerDefinition, scan: Reconciliation) => Promise<InferredDeletes>;
  /** Longest sleep between looks at the schedules (default one hour; `refresh` after a reload). */
  maxSleepMs?: number;
}

export interface ReconcileSchedule {
  /** Runs every partner's reconcile that is due at the timers' now; resolves to the results. */
  runDue(): Promise<Reconciliation[]>;
  /** Re-reads the schedules now (after the definitions changed). */
  refresh(): void;
  /** Resolves when no reconcile is running. */
  settled(): Promise<void>;
  stop(): Promise<void>;
}

export function startReconcileSchedule(o: ReconcileScheduleOptions): ReconcileSchedule {
  const next = new Map<string, { expression: string; at: number }>();
  let timer: TimerHandle | undefined;
  let stopped = false;
  let running: Promise<Reconciliation[]> = Promise.resolve([]);

  const plan = (def: PartnerDefinition, now: Date) => {
    const r = def.reconcile;
    if (r === undefined) return undefined;
    const known = next.get(def.partner);
    if (known && known.expression === r.schedule) return known;
    const entry = { expression: r.schedule, at: parseCron(r.schedule).next(now).getTime() };
    next.set(def.partner, entry);
    return entry;
  };

  async function runOne(def: PartnerDefinition, days: number): Promise<Reconciliation | undefined> {
    const lease = await o.locks.tryAcquire(`reconcile/${def.partner}`).catch(() => undefined);
    if (lease === undefined) return undefined;
    const to = addDays(utcDay(o.timers.now()), -1);
    const from = addDays(to, -(days - 1));
    try {
      const result = await reconcile({ store: o.store, clock: () => o.timers.now(), logger: o.logger, redact: o.redact }, def, from, to);
      if (o.inferDeletes && def.reconcile?.infer_deletes !== false) await inferred(def, result);
      if (result.ok) {
        o.logger.info(`reconcile ${def.partner} ${from}..${to}: no difference`, { event: 'reconcile_clean', partner: def.partner });
        await o.alerter?.send({ event: 'reconcile_clean', partner: def.partner, stream: '-', state: 'clean', lag_seconds: null, target: 'no difference', detail: `reconcile ${from}..${to}: no difference`, at: o.timers.now().toISOString() });
        return result;
      }
      const bad = result.days.filter((d) => !d.ok);
      const detail = `${bad.length} day(s) differ ${from}..${to}: ${bad.slice(0, 5).map((d) => `${d.day} ${d.entity} (${d.source.count}/${d.store.count} records${d.missing_in_store.length ? `, missing in the store: ${d.missing_in_store.slice(0, 3).join(', ')}` : ''}${d.missing_at_source.length ? `, missing at the source: ${d.missing_at_source.slice(0, 3).join(', ')}` : ''}${d.differing.length ? `, differing: ${d.differing.slice(0, 3).map((x) => x.key).join(', ')}` : ''})`).join('; ')}${result.unmappable.length ? `; ${result.unmappable.length} source record(s) unmappable` : ''}`;
      o.logger.error(`reconcile ${def.partner}: ${detail}`, { event: 'reconcile_difference', partner: def.partner, days: bad.map((d) => ({ day: d.day, entity: d.entity })) });
      await o.alerter?.send({ event: 'reconcile_difference', partner: def.partner, stream: [...new Set(bad.map((d) => d.entity))].join(','), state: 'difference', lag_seconds: null, target: 'no difference', detail, at: o.timers.now().toISOString() });
      return result;
    } catch (error) {
      o.logger.error(`reconcile ${def.partner} failed: ${o.redact((error as Error).message)}`, { event: 'reconcile_failed', partner: def.partner });
      return undefined;
    } finally {
      await lease.release();
    }
  }

  async function inferred(def: PartnerDefinition, result: Reconciliation): Promise<void> {
    try {
      const r = await (o.inferDeletes as NonNullable<typeof o.inferDeletes>)(def, result);
      for (const line of inferredLines(r)) o.logger.info(`reconcile ${def.partner}: ${line}`, { event: 'reconcile_deletes', partner: def.partner });
    } catch (error) {
      o.logger.error(`reconcile ${def.partner}: inferring deletes failed: ${o.redact((error as Error).message)}`, { event: 'reconcile_deletes_failed', partner: def.partner });
    }
  }

  async function due(): Promise<Reconciliation[]> {
    const now = o.timers.now();
    const out: Reconciliation[] = [];
    for (const def of o.definitions()) {
      const entry = plan(def, now);
      if (entry === undefined || entry.at > now.getTime()) continue;
      entry.at = parseCron(entry.expression).next(now).getTime();
      const result = await runOne(def, def.reconcile?.days ?? 3);
      if (result) out.push(result);
    }
    return out;
  }

  const schedule = () => {
    if (stopped) return;
    if (timer) o.timers.clearTimeout(timer);
    const now = o.timers.now().getTime();
    for (const def of o.definitions()) plan(def, new Date(now));
    const soonest = Math.min(now + (o.maxSleepMs ?? 3_600_000), ...[...next.values()].map((e) => e.at));
    timer = o.timers.setTimeout(() => {
      running = running.catch(() => []).then(due);
      void running.finally(schedule);
    }, Math.max(0, soonest - now));
  };
  schedule();

  return {
    runDue() {
      running = running.catch(() => []).then(due);
      return running;
    },
    refresh() {
      if (stopped) return;
      if (timer) o.timers.clearTimeout(timer);
      schedule();
    },
    settled: () => running.then(() => undefined, () => undefined),
    async stop() {
      stopped = true;
      if (timer) o.timers.clearTimeout(timer);
      await running.catch(() => undefined);
    },
  };
}
