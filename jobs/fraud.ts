/**
 * The fraud job: after every batch, in the load's own transaction, detection re-derives the facts
 * of the customers the batch touched and evaluates every pattern instance they take part in
 * (src/fraud/detect.ts; docs/fraud.md defines the rules). The flags commit with the batch, so a
 * crash loses neither, and the commission job after the same commit sees them. `fraud scan`
 * re-evaluates history.
 *
 *   const { config } = await loadFraudConfig('config/fraud.yaml');
 *   const loader = new Loader({ store, validator, jobs: [fraudJob(store, config, logger)] });
 */
import type { Knex } from 'knex';
import type { Logger } from '../src/log.js';
import type { AfterLoadJob, ChangeSet } from '../src/pipeline/load.js';
import type { Store } from '../src/store/store.js';
import type { Variant } from '../src/types.js';
import { lockPartnerLoads } from '../src/commission/recompute-pending.js';
import { randomUUID } from 'node:crypto';
import { addDays, utcDay } from '../src/kernel/dates.js';
import { append } from '../src/kernel/collections.js';
import { marksByRunDay, runCustomers, type RunDayEntity } from '../src/store/run-days.js';
import { formatFraudConfigError, loadFraudConfig, settingsFor, type FraudConfig, type RuleSettings } from '../src/fraud/config.js';
import { detect, markNotFound, type Detection } from '../src/fraud/detect.js';
import { lockFraud } from '../src/fraud/flags.js';
import { insertChunks, listChunks, rawRows } from '../src/store/dialects.js';
import { entityTable } from '../src/store/tables.js';
import { fromStoreTimestamp } from '../src/store/values.js';
import { insertArrays } from '../src/store/json-insert.js';

const SCAN_CHUNK = 2000;
/** Customers per settling group of a bulk run's deferred detection. */
const SETTLE_CHUNK = 20_000;

export { loadFraudConfig, formatFraudConfigError, type FraudConfig } from '../src/fraud/config.js';

/**
 * The fraud rules read again (the worker's SIGHUP): ok with the new rules (none when the file is
 * gone: no detection), or not ok when the file has errors, which are logged; the caller then keeps
 * the rules in force.
 */
export async function reloadFraudRules(file: string, logger: Logger): Promise<{ ok: true; config: FraudConfig | undefined } | { ok: false }> {
  const { config, errors } = await loadFraudConfig(file);
  if (errors.length === 0) return { ok: true, config };
  for (const e of errors) logger.error(`reload: invalid fraud rules: ${formatFraudConfigError(e)}`, { event: 'fraud_rules_error', file: e.file, path: e.path });
  logger.warn(`reload: the fraud rules in force stay: ${file} has errors`, { event: 'fraud_rules_kept' });
  return { ok: false };
}

/** The rules in force: a fixed config, a getter for a process that reloads it, or none (no detection). */
export type FraudSource = FraudConfig | undefined | (() => FraudConfig | undefined);

const current = (source: FraudSource): FraudConfig | undefined => (typeof source === 'function' ? source() : source);

/** Whether any activity of the partner is loaded for each of these days (fraud_loaded_days). */
async function coverage(trx: Knex.Transaction, partner: string, days: readonly string[]): Promise<Map<string, boolean>> {
  const out = new Map<string, boolean>(days.map((d) => [d, false]));
  for (let i = 0; i < days.length; i += 500) {
    for (const r of (await trx('fraud_loaded_days').where('partner_id', partner).whereIn('date', days.slice(i, i + 500)).select('date')) as { date: string }[]) out.set(r.date, true);
  }
  return out;
}

/**
 * The customers a committed batch touched, including those whose activity day it replaced (the
 * day's rows were deleted; the re-sent ones come in the batches after it). iGaming: a day whose
 * activity is loaded for the partner for the first time re-judges the customers whose wagering
 * windows waited for it (fraud_customers.pending_*); a day left without any activity (replaced,
 * not re-sent yet) re-judges the customers with a deposit or bonus whose windows may reach it.
 * Which customers have activity on a day is the activity table's own key (partner, date,
 * customer, ...): no copy of it is kept.
 */
async function touched(trx: Knex.Transaction, change: ChangeSet, settings: RuleSettings | undefined, byDay: boolean): Promise<Set<string>> {
  const ids = new Set<string>(change.replacedCustomers ?? []);
  // `byDay`: the customers of the batch's transactions and activity are deferred by day (deferDays).
  for (const entity of byDay ? ['customers'] as const : ['customers', 'transactions', 'activity'] as const) for (const r of change.records[entity]) ids.add(String(r.customer_id));
  const partner = change.partner;
  const batchDays = [...new Set(change.records.activity.map((r) => String(r.date).slice(0, 10)))].sort();
  const watch = change.variant === 'igaming' && settings ? [...new Set([...batchDays, ...change.replacedDays])].sort() : [];
  const before = await coverage(trx, partner, watch);
  // The partner's loaded days: the batch's days are loaded; a replaced day stays loaded only if
  // some row of it is left.
  for (const part of insertChunks(trx, batchDays.map((date) => ({ partner_id: partner, date })))) await trx('fraud_loaded_days').insert(part).onConflict(['partner_id', 'date']).ignore();
  const activity = entityTable(change.variant, 'activity').name;
  for (const d of change.replacedDays) {
    if (batchDays.includes(d)) continue;
    if ((await trx(activity).where({ partner_id: partner, date: d }).first('customer_id')) === undefined) await trx('fraud_loaded_days').where({ partner_id: partner, date: d }).delete();
  }
  if (watch.length > 0 && settings) {
    const after = await coverage(trx, partner, watch);
    const reach = Math.max(settings.cpa_farming.within_days - 1, settings.bonus_bust_out.within_days, settings.deposit_cycling.within_days);
    for (const d of watch) {
      if (before.get(d) === after.get(d)) continue;
      if (after.get(d)) {
        const waiting: { customer_id: string }[] = await trx('fraud_customers').where('partner_id', partner).where('pending_to', '>=', d).where('pending_from', '<=', d).select('customer_id');
        for (const r of waiting) ids.add(r.customer_id);
      } else {
        const judged: { customer_id: string }[] = await trx('transactions').where('partner_id', partner).whereIn('transaction_type', ['deposit', 'bonus'])
          .where('transaction_date', '>=', `${addDays(d, -reach)}T00:00:00.000000Z`).where('transaction_date', '<', `${addDays(d, 1)}T00:00:00.000000Z`).distinct('customer_id');
        for (const r of judged) ids.add(r.customer_id);
      }
    }
  }
  return ids;
}

/** The partner's loaded days, rebuilt from its activity rows (a rescan). */
async function rebuildLoadedDays(trx: Knex.Transaction, partner: string, variant: Variant): Promise<void> {
  const activity = entityTable(variant, 'activity').name;
  await trx('fraud_loaded_days').where('partner_id', partner).delete();
  const day = trx.client.config.client === 'pg' ? "to_char(date, 'YYYY-MM-DD')" : 'date';
  await trx.raw(`INSERT INTO fraud_loaded_days (partner_id, date) SELECT DISTINCT partner_id, ${day} FROM ${activity} WHERE partner_id = ?`, [partner]);
}

/**
 * The fraud job. At commit (policy `at-commit`) the rules are judged in the batch's own
 * transaction over the customers it touched, so the flags commit with it and the commissions
 * evaluated after the same commit see them. Otherwise what the batch touched waits on disk with the
 * batch (fraud_deferred; a group's transactions and activity by run day) for the evaluation.
 */
export function fraudJob(store: Store, source: FraudSource, logger: Logger): AfterLoadJob {
  return {
    name: 'fraud',
    async mark({ trx }, change) {
      const config = current(source);
      if (!config) return;
      const started = performance.now();
      const byDay = marksByRunDay(change);
      const customers = await touched(trx, change, settingsFor(config, change.partner), byDay);
      if (change.policy !== 'at-commit') {
        if (customers.size > 0) await deferCustomers(trx, change.partner, change.variant, customers, store.now());
        if (byDay) await deferDays(trx, change, store.now());
        return;
      }
      if (customers.size === 0) return;
      const r = await detect(trx, store, config, { partner: change.partner, variant: change.variant, customers });
      // Flags exist once the batch commits: a transaction that fails at its COMMIT (a full disk) opened none.
      trx.executionPromise.then(() => logDetection(logger, r, change.runId, started), () => undefined);
    },
    async evaluate({ change }) {
      // At commit the rules were judged in the batch's transaction.
      if (change.policy === 'at-commit') return;
      await settleFraud(store, source, logger, change.partner, change.runId);
    },
    pending: deferredFraudPartners,
  };
}

function logDetection(logger: Logger, r: Detection, runId: string, started: number): void {
  if (r.opened + r.updated + r.withdrawn + r.unsupported === 0) return;
  logger.log(r.opened > 0 ? 'warn' : 'info', `fraud: ${r.opened} flag(s) opened, ${r.updated} updated, ${r.withdrawn} withdrawn, ${r.unsupported} decided no longer supported, over ${r.customers} customers`, {
    partner: r.partner, run_id: runId, event: 'fraud_flags', opened: r.opened, updated: r.updated, withdrawn: r.withdrawn, unsupported: r.unsupported, customers: r.customers, duration_ms: Math.round(performance.now() - started),
  });
}

/** Records customers whose detection a bulk run defers (fraud_deferred), in the batch's transaction. */
async function deferCustomers(trx: Knex.Transaction, partner: string, variant: Variant, customers: ReadonlySet<string>, now: string): Promise<void> {
  if (trx.client.config.client === 'pg') {
    await insertArrays(trx, 'fraud_deferred', { partner_id: ['text', partner], variant: ['text', variant], created_at: ['timestamptz', now] },
      { customer_id: ['text', [...customers]] }, ' ON CONFLICT DO NOTHING');
    return;
  }
  const rows = [...customers].map((customer_id) => ({ partner_id: partner, variant, customer_id, created_at: now }));
  for (const part of insertChunks(trx, rows)) await trx('fraud_deferred').insert(part).onConflict(['partner_id', 'customer_id']).ignore();
}

/** Records the UTC days of a bulk batch's transactions and activity (fraud_deferred_days, src/store/run-days.ts), in its transaction. */
async function deferDays(trx: Knex.Transaction, change: ChangeSet, now: string): Promise<void> {
  const writer = randomUUID();
  const rows: Record<string, string>[] = [];
  const add = (entity: RunDayEntity, days: Iterable<string>) => {
    for (const date of new Set(days)) rows.push({ partner_id: change.partner, variant: change.variant, run_id: change.runId, entity, date, writer, created_at: now });
  };
  add('transactions', change.records.transactions.map((t) => utcDay(String(t.transaction_date))));
  add('activity', change.records.activity.map((a) => String(a.date).slice(0, 10)));
  for (const part of insertChunks(trx, rows)) await trx('fraud_deferred_days').insert(part);
}

/**
 * Takes the partner's deferred days (fraud_deferred_days): deletes them and lists the customers of
 * the rows their runs wrote on them, with the oldest day's age (undefined: none). In the settle's
 * transaction, under the partner's fraud lock; rows a batch commits after the take wait with that
 * batch's own days.
 */
async function takeDays(trx: Knex.Transaction, partner: string): Promise<{ customers: Set<string>; variant: Variant; since: string } | undefined> {
  const taken = rawRows<DeferredDay>(await trx.raw('DELETE FROM fraud_deferred_days WHERE partner_id = ? RETURNING variant, run_id, entity, date, created_at', [partner]));
  if (taken.length === 0) return undefined;
  const customers = new Set<string>();
  await customersOfDeferredDays(trx, partner, taken, customers);
  const since = taken.map((r) => fromStoreTimestamp(r.created_at) as string).sort()[0] as string;
  return { customers, variant: taken[0]!.variant as Variant, since };
}

/** Adds the customers of the rows these deferred days name to `into`: one listing per run, entity and run of days. */
export async function customersOfDeferredDays(db: Knex | Knex.Transaction, partner: string, days: readonly DeferredDay[], into: Set<string>): Promise<void> {
  const groups = new Map<string, DeferredDay[]>();
  for (const d of days) append(groups, `${d.run_id}\u0000${d.entity}`, d);
  for (const list of groups.values()) {
    const [first] = list as [DeferredDay];
    await runCustomers(db, partner, first.variant as Variant, first.entity as RunDayEntity, first.run_id, list.map((d) => d.date), into);
  }
}

export interface DeferredDay { variant: string; run_id: string; entity: string; date: string; created_at: unknown }

/**
 * Evaluates the fraud rules over the customers bulk runs deferred for this partner, in groups of
 * SETTLE_CHUNK customers, each group in its own transaction under the partner's fraud lock: the
 * group's rows of fraud_deferred are taken in the transaction that writes its flags, so a crash
 * leaves exactly the groups not evaluated yet. Without rules in force, the deferred rows are dropped
 * (a batch without rules evaluates nothing either). `chunk`: the customers a group (20,000; a
 * test's smaller groups take the path a larger run takes).
 */
export async function settleFraud(store: Store, source: FraudSource, logger: Logger, partner: string, runId: string, chunk = SETTLE_CHUNK): Promise<number> {
  const config = current(source);
  let settled = 0;
  for (;;) {
    // Logged once the group's flags are committed, never for a transaction that failed (at its COMMIT too).
    let detection: { r: Detection; started: number } | undefined;
    const done = await store.transaction(async (trx) => {
      // Not the load lock: loads go on meanwhile (a push is answered at its commit); those of the same
      // customers wait for this group's commit, then wait in fraud_deferred for the next one.
      await lockFraud(store, trx, partner);
      const evaluate = async (variant: Variant, customers: Set<string>): Promise<number> => {
        if (config) {
          const started = performance.now();
          detection = { r: await detect(trx, store, config, { partner, variant, customers }), started };
        }
        return customers.size;
      };
      const taken = await takeDays(trx, partner);
      // The deferred customers and the days' customers make one group at most: evaluated as they
      // are, the days' customers not written to fraud_deferred to be read back and deleted in this
      // transaction (a month's import defers its customers by customer, its activity by day).
      const stored: { customer_id: string; variant: Variant }[] = await trx('fraud_deferred').where('partner_id', partner).limit(chunk + 1).select('customer_id', 'variant');
      const group = new Set([...stored.map((r) => r.customer_id), ...(taken?.customers ?? [])]);
      if (stored.length <= chunk && group.size <= chunk) {
        if (group.size === 0) return 0;
        for (const part of listChunks(trx, stored.map((r) => r.customer_id))) await trx('fraud_deferred').where('partner_id', partner).whereIn('customer_id', part).delete();
        return evaluate(stored[0]?.variant ?? taken!.variant, group);
      }
      if (taken && taken.customers.size > 0) await deferCustomers(trx, partner, taken.variant, taken.customers, taken.since);
      const rows: { customer_id: string; variant: Variant }[] = await trx('fraud_deferred').where('partner_id', partner).orderBy('customer_id').limit(chunk).select('customer_id', 'variant');
      if (rows.length === 0) return 0;
      const ids = rows.map((r) => r.customer_id);
      for (const part of listChunks(trx, ids)) await trx('fraud_deferred').where('partner_id', partner).whereIn('customer_id', part).delete();
      return evaluate(rows[0]!.variant, new Set(ids));
    });
    if (detection) logDetection(logger, detection.r, runId, detection.started);
    settled += done;
    if (done < chunk) return settled;
  }
}

/** Partners with customers a bulk run left to evaluate (a crash, or a run that did not settle). */
export async function deferredFraudPartners(knex: Knex): Promise<{ partner: string; variant: Variant }[]> {
  const rows = [
    ...(await knex('fraud_deferred').distinct('partner_id', 'variant') as { partner_id: string; variant: Variant }[]),
    ...(await knex('fraud_deferred_days').distinct('partner_id', 'variant') as { partner_id: string; variant: Variant }[]),
  ];
  const out = new Map(rows.map((r) => [r.partner_id, { partner: r.partner_id, variant: r.variant }]));
  return [...out.values()].sort((a, b) => (a.partner < b.partner ? -1 : a.partner > b.partner ? 1 : 0));
}

export interface ScanOptions {
  partner?: string;
  /** Only customers with a signup, transaction or activity on or after this UTC day. */
  from?: string;
  /** Customers per detection chunk (default 2000). */
  chunk?: number;
}

/**
 * `fraud scan`: re-evaluates history per partner, under the partner's load lock, in one
 * transaction. Unchanged data changes nothing; a decided flag keeps its decision; a whole-history
 * scan withdraws every open flag of an enabled rule it no longer finds and notes decided ones.
 */
export async function scanFraud(store: Store, config: FraudConfig, options: ScanOptions = {}): Promise<Detection[]> {
  let q = store.knex('partners').select('partner_id', 'variant').orderBy('partner_id');
  if (options.partner) q = q.where('partner_id', options.partner);
  const partners: { partner_id: string; variant: Variant }[] = await q;
  const out: Detection[] = [];
  for (const { partner_id: partner, variant } of partners) {
    out.push(await store.transaction(async (trx) => {
      await lockPartnerLoads(store, trx, partner);
      const customers = new Set<string>();
      const from = options.from;
      let c = trx('customers').where('partner_id', partner);
      if (from) c = c.where('signup_date', '>=', `${from}T00:00:00.000000Z`);
      for (const r of (await c.select('customer_id')) as { customer_id: string }[]) customers.add(r.customer_id);
      if (from) {
        const tx: { customer_id: string }[] = await trx('transactions').where('partner_id', partner).where('transaction_date', '>=', `${from}T00:00:00.000000Z`).distinct('customer_id');
        const act: { customer_id: string }[] = await trx(variant === 'igaming' ? 'gaming_activity' : 'trading_activity').where('partner_id', partner).where('date', '>=', from).distinct('customer_id');
        for (const r of [...tx, ...act]) customers.add(r.customer_id);
      }
      const ids = [...customers].sort();
      await rebuildLoadedDays(trx, partner, variant);
      // In chunks, so memory stays bounded: each instance is judged last by the chunk holding the
      // last of its customers, when all their facts are derived; what no chunk found is marked at the end.
      const total: Detection = { partner, customers: ids.length, findings: 0, opened: 0, updated: 0, withdrawn: 0, unsupported: 0 };
      const found = new Set<string>();
      const chunk = options.chunk ?? SCAN_CHUNK;
      for (let i = 0; i < ids.length || i === 0; i += chunk) {
        const r = await detect(trx, store, config, { partner, variant, customers: new Set(ids.slice(i, i + chunk)) }, { found, force: true });
        total.opened += r.opened;
        total.updated += r.updated;
        total.withdrawn += r.withdrawn;
        total.unsupported += r.unsupported;
      }
      if (!from) await markNotFound(trx, store, config, partner, variant, found, total);
      total.findings = found.size;
      return total;
    }));
  }
  return out;
}
