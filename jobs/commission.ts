/**
 * The commission job: runs after every committed load (pull, import, backfill; later push) for
 * only what that load touched, and after an FX import for what waited for the new rates or used
 * a changed one. The engine itself is src/commission/; docs/commissions.md defines the rules.
 *
 * What a batch touched is written to the partner's pending scope inside the load transaction;
 * the evaluation after the commit takes it, in its own transaction. Before a transactions batch
 * overwrites stored rows, the customer and bonus day their old versions counted for join it (a
 * changed customer or date must be taken back where it was counted). A crash in between leaves the
 * scope on disk: the partner's next evaluation takes it, and `resumeJobs` (jobs/load-hooks.ts, at
 * the start of every loading command and of the worker) evaluates what nothing else would.
 *
 *   const { plans, errors } = await loadPlans('config/commissions.yaml');
 *   const loader = new Loader({ store, validator, jobs: [commissionJob(store, plans, logger)] });
 */
import { readFile } from 'node:fs/promises';
import type { Logger } from '../src/log.js';
import type { AfterLoadJob } from '../src/pipeline/jobs.js';
import type { Store } from '../src/store/store.js';
import type { Variant } from '../src/types.js';
import { evaluateScope, plansFor } from '../src/commission/engine.js';
import type { Evaluation } from '../src/commission/booking.js';
import { emptyScope, pendingPartners, scopeSize, writePending } from '../src/commission/scope.js';
import { parseRatesCsv, saveRates, type FxRate, type RatesFileProblem, type RatesImport } from '../src/store/fx-rates.js';
import { append } from '../src/kernel/collections.js';
import type { Plan } from '../src/commission/plans.js';
import { addPriorVersions, PRIOR_TRANSACTION_COLUMNS } from '../src/commission/prior-versions.js';
import { scopeOfChange } from '../src/commission/scope.js';
import { addRemoved } from '../src/commission/deletes.js';
import { refreshFactsForRates } from '../src/reports/facts.js';
import { ratesScope } from '../src/commission/rates-scope.js';
import { listPartners } from '../src/store/partners.js';

/** The plans in force: a fixed list, or a getter for a worker that re-reads them. */
export type PlanSource = readonly Plan[] | (() => readonly Plan[]);

const current = (plans: PlanSource): readonly Plan[] => (typeof plans === 'function' ? plans() : plans);

/**
 * The commission job: in each load transaction the batch's scope (what it wrote, and the customer
 * and bonus day a changed transaction's stored version counted for) is added to its partner's
 * pending scope; each evaluation takes the pending scope, in its own transaction. It comes after
 * the fraud rules: it reads their flags (holds), once `ctx.after` says they are judged, and
 * derives the customer-days before that.
 */
export function commissionJob(store: Store, plans: PlanSource, logger: Logger): AfterLoadJob {
  // A day's load evaluates after every batch: a missing rate is warned of once, not per batch.
  const warned = new WarnedRates();
  return {
    name: 'commission',
    after: ['fraud'],
    priors: (entity) => (entity === 'transactions' && current(plans).length > 0 ? PRIOR_TRANSACTION_COLUMNS : undefined),
    async mark({ trx }, change) {
      if (plansFor(current(plans), change.partner, change.variant).length === 0) return;
      const scope = scopeOfChange(change);
      addRemoved(scope, change);
      addPriorVersions(scope, change.records.transactions, change.prior.transactions);
      await writePending(trx, scope, store.now());
    },
    async evaluate({ change, after, reached }) {
      await evaluatePartner(store, current(plans), change.partner, change.variant, change.runId, logger, warned, { after, daysDerived: () => reached('days') });
    },
    pending: async (knex) => (await pendingPartners(knex)).map(({ partner, variant }) => ({ partner, variant })),
  };
}

/**
 * Evaluates one partner's pending scope now: what a command that changed it outside a load (a
 * fraud decision, through markForReview) calls after its commit. Nothing when no plan applies.
 * `order`: evaluateScope's `after` and `daysDerived` (a bulk settle beside the fraud rules).
 */
export async function evaluatePartner(store: Store, plans: readonly Plan[], partner: string, variant: Variant, runId: string, logger: Logger, warned?: WarnedRates,
  order: { after?: Promise<unknown>; daysDerived?: () => void } = {}): Promise<Evaluation | undefined> {
  if (plansFor(plans, partner, variant).length === 0) {
    order.daysDerived?.();
    await order.after;
    return undefined;
  }
  const started = performance.now();
  const result = await evaluateScope(store, plans, emptyScope(partner, variant, runId), order);
  logEvaluation(logger, result, runId, performance.now() - started, warned);
  return result;
}

/**
 * The missing rates (partner, currency and day) already warned of by this process: later
 * evaluations waiting for the same rate log at info level. Bounded: past the limit it starts over
 * (a rate warned of again is better than a process that grows).
 */
export class WarnedRates {
  private readonly seen = new Set<string>();
  constructor(private readonly limit = 10_000) {}

  /** The rates of `rates` not warned of yet for the partner; remembered from now on. */
  fresh(partner: string, rates: readonly string[]): string[] {
    const out: string[] = [];
    for (const rate of rates) {
      const key = `${partner}\u0000${rate}`;
      if (this.seen.has(key)) continue;
      if (this.seen.size >= this.limit) this.seen.clear();
      this.seen.add(key);
      out.push(rate);
    }
    return out;
  }
}

function logEvaluation(logger: Logger, r: Evaluation, runId: string, ms: number, warned?: WarnedRates): void {
  // Without a memory of what was warned (a one-off evaluation), every hold is warned of.
  const newlyMissing = warned ? warned.fresh(r.partner, r.missingRates) : r.missingRates;
  const level = r.held > 0 && (!warned || newlyMissing.length > 0) ? 'warn' : 'info';
  logger.log(level, `commissions: ${r.lines} lines (${r.net.toFixed(2)} USD) over ${r.keys} keys` +
    (r.held > 0 ? `, ${r.held} held waiting for FX rates` + (newlyMissing.length > 0 ? ` (missing: ${newlyMissing.join(', ')})` : '') : '') +
    (r.reviewHeld > 0 ? `, ${r.reviewHeld} held for review` : ''), {
    partner: r.partner, run_id: runId, keys: r.keys, lines: r.lines, net_usd: r.net.toFixed(2), held: r.held, missing_rates: r.missingRates, released: r.released,
    review_held: r.reviewHeld, review_released: r.reviewReleased, customer_days: r.days, duration_ms: Math.round(ms),
  });
}

export interface FxImportResult {
  file: string;
  problems: RatesFileProblem[];
  rates: number;
  saved?: RatesImport;
  evaluations: Evaluation[];
}

/**
 * `fx import`: a rates file is loaded whole or not at all (every problem reported with its
 * line); then each partner re-evaluates what waited for a rate (holds, customer-days missing
 * one) and, for a rate that changed, every record of that currency and day.
 */
export async function importRatesFile(store: Store, plans: readonly Plan[], file: string, logger: Logger): Promise<FxImportResult> {
  const text = await readFile(file, 'utf8');
  const { rates, problems } = parseRatesCsv(text);
  if (problems.length > 0) return { file, problems, rates: rates.length, evaluations: [] };
  const { saved, evaluations } = await importRates(store, plans, rates, file.replace(/^.*[\\/]/, ''), logger);
  return { file, problems, rates: rates.length, saved, evaluations };
}

/**
 * Rates from a file or a feed into the store, in one transaction with the report facts they move,
 * then what waited for them (or used a rate they replaced) evaluated. `source` is kept per rate.
 */
export async function importRates(store: Store, plans: readonly Plan[], rates: readonly FxRate[], source: string | ((rate: FxRate) => string), logger: Logger): Promise<{ saved: RatesImport; evaluations: Evaluation[] }> {
  const runId = `fx-import-${store.now()}`;
  const saved = await store.transaction(async (trx) => {
    const bySource = new Map<string, FxRate[]>();
    for (const r of rates) append(bySource, typeof source === 'string' ? source : source(r), r);
    const result: RatesImport = { added: 0, changed: 0, unchanged: 0, replaced: [] };
    for (const [name, list] of bySource) {
      const one = await saveRates(trx, list, name, store.now());
      result.added += one.added;
      result.changed += one.changed;
      result.unchanged += one.unchanged;
      result.replaced.push(...one.replaced);
    }
    // The report facts convert with the same rates: their days are recomputed with the import.
    await refreshFactsForRates(trx, rates);
    return result;
  });
  return { saved, evaluations: await reevaluateForRates(store, plans, saved, runId, logger) };
}

/** Re-evaluates what the saved rates can move: held entries, customer-days missing a rate, and the records of every replaced rate's day. */
export async function reevaluateForRates(store: Store, plans: readonly Plan[], saved: RatesImport, runId: string, logger: Logger): Promise<Evaluation[]> {
  const out: Evaluation[] = [];
  for (const { partner, variant } of await listPartners(store.knex)) {
    if (plansFor(plans, partner, variant).length === 0) continue;
    const scope = await ratesScope(store.knex, partner, variant, saved.replaced, runId);
    if (scopeSize(scope) === 0) continue;
    const started = performance.now();
    const result = await evaluateScope(store, plans, scope);
    logEvaluation(logger, result, runId, performance.now() - started);
    out.push(result);
  }
  return out;
}
