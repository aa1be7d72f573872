import { deleteFigures } from '../../store/delete-holds.js';
import { describeUnevaluated, unevaluated } from '../../store/unevaluated.js';
import { pendingPartners } from '../../commission/scope.js';
import { commissionHoldSummary } from '../../commission/ledger.js';
import { reviewHoldSummary } from '../../commission/review-holds.js';
import { checklistStatus } from '../../onboarding/checklist.js';
import { statusRows, type StatusRow } from '../../../jobs/stream-status.js';
import { withStore, type GlobalOptions } from '../context.js';
import { loadConfig, type LoadedConfig } from '../definitions.js';
import { formatDefinitionError } from '../../config/load-definitions.js';
import { isBreach } from '../../freshness.js';
import { EXIT_FAILURE, EXIT_OK, type Io } from '../io.js';
import { formatTable } from '../table.js';

/**
 * `status [--partner P] [--check]`: per partner and stream, last run, watermark, lag against the
 * freshness target, rejects, waiting; for pushed streams (the HTTP API), whether the stream is fed
 * by pull, push or both and when a push last delivered (src/push/freshness.ts for what a pushed
 * stream's breach is). `--check` is for monitoring: exit 1 when a configured stream
 * breaches its freshness target (customers or transactions more than 5 minutes behind, the
 * previous UTC day's activity not loaded at 06:00 UTC, or a stream never loaded) or a definition
 * is invalid (its streams are not being pulled); each is an error event in the log.
 * Below the streams: per partner, commission entries held for missing FX rates (booked when the
 * rate arrives), entries held for review by open fraud flags (apart from the FX holds), and
 * commission evaluations still pending (resumed by the next load or worker start).
 */
export async function statusCommand(globals: GlobalOptions, args: { partner?: string; check?: boolean }, io: Io): Promise<number> {
  const config = await loadConfig(globals);
  const noDefinitionsFolder = dropMissingFolder(config);
  return withStore(globals, async (store) => {
    const now = store.clock();
    const rows = await statusRows(store, config.definitions, args.partner, config.invalid);
    const commissions = await commissionStatus(store.knex, args.partner);
    const waitingEvaluation = await unevaluated(store.knex, now, args.partner);
    const breaches = rows.filter((r) => r.freshness !== null && isBreach(r.freshness));
    const brokenDefinitions = config.errors.filter((e) => !args.partner || e.file.replace(/^.*[\\/]/, '').replace(/\.ya?ml$/i, '') === args.partner);
    // Deletes per stream: applied (tombstones), held by the mass-delete guard, discarded.
    const deletes = await deleteFigures(store.knex, args.partner);
    const heldDeletes = deletes.reduce((n, d) => n + d.holds, 0);
    const checkFailed = breaches.length > 0 || brokenDefinitions.length > 0 || heldDeletes > 0;
    if (args.check) {
      for (const b of breaches) {
        config.logger.error(`freshness breach: ${b.partner}/${b.stream}: ${b.freshness?.detail} (target: ${b.freshness?.target})`, {
          event: 'freshness_breach', partner: b.partner, stream: b.stream, state: b.freshness?.state, lag_ms: b.freshness?.lagMs, target: b.freshness?.target,
        });
      }
      for (const e of brokenDefinitions) config.logger.error(`invalid definition, its streams are not pulled: ${formatDefinitionError(e)}`, { event: 'definition_error', file: e.file, path: e.path });
    }
    const exitCode = args.check && checkFailed ? EXIT_FAILURE : EXIT_OK;
    const check = {
      ok: !checkFailed,
      breaches: breaches.map((b) => ({ partner: b.partner, stream: b.stream, state: b.freshness?.state, lag_ms: b.freshness?.lagMs, detail: b.freshness?.detail })),
      definition_errors: brokenDefinitions.length,
      delete_holds: heldDeletes,
    };
    if (globals.json) {
      io.out(JSON.stringify({ now: now.toISOString(), streams: rows, commissions, unevaluated: waitingEvaluation, deletes: deletes.map((d) => ({ partner: d.partner, stream: d.entity, deleted: d.applied, held: d.held, holds: d.holds, discarded: d.discarded })), definition_errors: config.errors, onboarding: await checklistStatus(store.knex, args.partner), ...(args.check ? { check } : {}) }));
      return exitCode;
    }
    if (rows.length === 0) io.out('no partners yet: add a definition under config/partners/, or import a file');
    else {
      // The push columns show once some stream is pushed: a pull-only setup reads as before.
      const anyPush = rows.some((r) => r.fed_by === 'push' || r.fed_by === 'both');
      io.out(formatTable(
        ['PARTNER', 'STREAM', 'LAST RUN', 'RESULT', 'WATERMARK', 'FRESHNESS', 'REJECTS', 'WAITING', ...(anyPush ? ['FED BY', 'LAST PUSH'] : [])],
        rows.map((r) => [
          r.partner, r.stream,
          r.last_run ? `${r.last_run.started_at?.slice(0, 19).replace('T', ' ')} ${r.last_run.kind}` : 'never',
          r.last_run?.status ?? '-',
          r.watermark ?? '-',
          freshnessCell(r),
          r.rejects_open, r.waiting,
          ...(anyPush ? [r.fed_by ?? '-', r.last_pushed_at ? r.last_pushed_at.slice(0, 19).replace('T', ' ') : '-'] : []),
        ]),
      ));
      // The table cuts long cells: what is wrong with each invalid definition, in full (as `check` says it).
      for (const [partner, errors] of invalidShown(rows)) {
        io.out(`${partner}: the definition cannot load, its streams are not pulled:`);
        for (const e of errors) io.out(`  ${formatDefinitionError(e)}`);
      }
    }
    if (commissions.length > 0) {
      io.out('');
      io.out(formatTable(['PARTNER', 'HELD FX', 'SINCE', 'WAITING FOR FX RATES', 'HELD REVIEW', 'REVIEW WITHHELD USD', 'REVIEW WAITING USD', 'FRAUD FLAGS', 'PENDING EVALUATION'],
        commissions.map((c) => [c.partner, c.held, c.held_since?.slice(0, 19).replace('T', ' ') ?? '-',
          c.missing_rates.slice(0, 4).join(', ') + (c.missing_rates.length > 4 ? ` +${c.missing_rates.length - 4}` : '') || '-',
          c.review_held > 0 ? c.review_held : '-', c.review_held > 0 ? c.review_withheld_usd : '-', c.review_held > 0 ? c.review_waiting_usd : '-',
          c.review_flags.slice(0, 6).map((f) => `#${f}`).join(' ') + (c.review_flags.length > 6 ? ` +${c.review_flags.length - 6}` : '') || '-',
          c.pending_entries > 0 ? `${c.pending_entries} scope entries` : '-'])));
      if (commissions.some((c) => c.held > 0)) io.out('held for FX: booked when their rates arrive: partner-sync fx import FILE.csv');
      if (commissions.some((c) => c.review_held > 0)) io.out('held for review: released when their fraud flags are dismissed, voided when confirmed: partner-sync fraud list');
    }
    if (deletes.length > 0) {
      io.out('');
      io.out(formatTable(['PARTNER', 'STREAM', 'DELETED AT THE SOURCE', 'HELD BY THE GUARD', 'DISCARDED'],
        deletes.map((d) => [d.partner, d.entity, d.applied, d.held > 0 ? `${d.held} in ${d.holds} hold(s)` : '-', d.discarded > 0 ? d.discarded : '-'])));
      if (heldDeletes > 0) io.out('held deletes are not applied: partner-sync deletes list, then deletes apply ID or deletes discard ID');
    }
    if (waitingEvaluation.length > 0) {
      io.out('');
      for (const u of waitingEvaluation) io.out(describeUnevaluated(u));
      io.out('the run loading them evaluates them at its end; after a crash, the next loading command or the worker does');
    }
    for (const e of config.errors) io.err(`warning: ${formatDefinitionError(e)}`);
    if (noDefinitionsFolder && rows.length > 0) io.out(`note: no connector definitions (${config.dir} does not exist): only ${rows.some((r) => r.pushed_records > 0) ? 'pushed and imported' : 'imported'} data is shown`);
    if (args.check) {
      const streams = rows.filter((r) => r.freshness !== null).length;
      io.out(checkFailed
        ? `check failed: ${breaches.length} of ${streams} stream(s) breach their freshness target${breaches.length > 0 ? ` (${breaches.map((b) => `${b.partner}/${b.stream}`).join(', ')})` : ''}${brokenDefinitions.length > 0 ? `; ${brokenDefinitions.length} definition error(s)` : ''}${heldDeletes > 0 ? `; ${heldDeletes} delete hold(s) wait for an operator (partner-sync deletes list)` : ''}`
        : `check ok: ${streams} stream(s) within their freshness target`);
    }
    return exitCode;
  });
}

function freshnessCell(r: StatusRow): string {
  if (!r.freshness) return 'not pulled (no definition)';
  // A stream of an invalid definition, unless pushes keep it fresh: its errors follow the table.
  if (r.definition_errors.length > 0 && r.freshness.state === 'stopped') return 'stopped: definition invalid (below)';
  return r.freshness.detail.startsWith(`${r.freshness.state}:`) ? r.freshness.detail : `${r.freshness.state}: ${r.freshness.detail}`;
}

/** Per partner shown with an invalid definition: its errors. */
function invalidShown(rows: readonly StatusRow[]): Map<string, StatusRow['definition_errors']> {
  return new Map(rows.filter((r) => r.definition_errors.length > 0).map((r) => [r.partner, r.definition_errors]));
}

interface CommissionStatus {
  partner: string;
  /** Entries held for missing FX rates, the oldest hold, and the rates they wait for. */
  held: number;
  held_since: string | null;
  missing_rates: string[];
  /** Entries held for review (an open fraud flag), separate from FX holds: withheld (booked) and waiting (not booked) USD, and the flags. */
  review_held: number;
  review_held_since: string | null;
  review_withheld_usd: string;
  review_waiting_usd: string;
  review_flags: number[];
  /** Scope entries whose evaluation has not run yet (a crash or a failure after their batch committed). */
  pending_entries: number;
}

async function commissionStatus(knex: Parameters<typeof pendingPartners>[0], partner: string | undefined): Promise<CommissionStatus[]> {
  const out = new Map<string, CommissionStatus>();
  const entry = (p: string): CommissionStatus => {
    let c = out.get(p);
    if (!c) out.set(p, (c = { partner: p, held: 0, held_since: null, missing_rates: [], review_held: 0, review_held_since: null, review_withheld_usd: '0.00', review_waiting_usd: '0.00', review_flags: [], pending_entries: 0 }));
    return c;
  };
  for (const h of await commissionHoldSummary(knex)) Object.assign(entry(h.partner), { held: h.held, held_since: h.oldest, missing_rates: h.missing_rates });
  for (const r of await reviewHoldSummary(knex)) {
    Object.assign(entry(r.partner), { review_held: r.held, review_held_since: r.oldest, review_withheld_usd: r.withheld_usd, review_waiting_usd: r.waiting_usd, review_flags: r.flags });
  }
  for (const p of await pendingPartners(knex)) entry(p.partner).pending_entries = p.entries;
  return [...out.values()].filter((c) => !partner || c.partner === partner).sort((a, b) => a.partner.localeCompare(b.partner));
}

/**
 * A store used for imports only has no partners folder: that is a setup, not a broken definition
 * (no warning, and `--check` does not fail for it). Returns whether the folder is missing.
 */
function dropMissingFolder(config: LoadedConfig): boolean {
  const missing = (e: LoadedConfig['errors'][number]) => e.file === config.dir && e.path === '' && e.message.endsWith(': ENOENT');
  const found = config.errors.some(missing);
  if (found) config.errors = config.errors.filter((e) => !missing(e));
  return found;
}
