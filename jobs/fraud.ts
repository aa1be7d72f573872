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
import type { Logger } from '../src/log.js';
import type { AfterLoadJob } from '../src/pipeline/jobs.js';
import type { Store } from '../src/store/store.js';
import type { Variant } from '../src/types.js';
import { lockPartnerLoads } from '../src/commission/recompute-pending.js';
import { marksByRunDay } from '../src/store/run-days.js';
import { listPartners } from '../src/store/partners.js';
import { formatFraudConfigError, loadFraudConfig, settingsFor, type FraudConfig } from '../src/fraud/config.js';
import { detect, markNotFound, type Detection } from '../src/fraud/detect.js';
import { lockFraud } from '../src/fraud/flags.js';
import { deferCustomers, deferDays, deferredFraudPartners, takeGroup } from '../src/fraud/deferred.js';
import { rebuildLoadedDays, scanCustomers, touchedCustomers } from '../src/fraud/scope.js';

const SCAN_CHUNK = 2000;
/** Customers per settling group of a bulk run's deferred detection. */
const SETTLE_CHUNK = 20_000;

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
      const customers = await touchedCustomers(trx, change, settingsFor(config, change.partner), byDay);
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
      const group = await takeGroup(trx, partner, chunk);
      return group ? evaluate(group.variant, group.customers) : 0;
    });
    if (detection) logDetection(logger, detection.r, runId, detection.started);
    settled += done;
    if (done < chunk) return settled;
  }
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
  const partners = await listPartners(store.knex, options.partner);
  const out: Detection[] = [];
  for (const { partner, variant } of partners) {
    out.push(await store.transaction(async (trx) => {
      await lockPartnerLoads(store, trx, partner);
      const from = options.from;
      const ids = await scanCustomers(trx, partner, variant, from);
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
