import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { formatPlanError, loadPlans } from '../../commission/load-plans.js';
import type { Plan } from '../../commission/plans.js';
import { recompute } from '../../commission/recompute.js';
import { ledgerReport } from '../../commission/report.js';
import { isMonth } from '../../kernel/dates.js';
import { withStore, type GlobalOptions } from '../context.js';
import { CliError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, type Io } from '../io.js';
import { formatTable } from '../table.js';
import type { Store } from '../../store/store.js';

/** `<config>/commissions.yaml`: the plans, or a usage error listing every problem (exit 2). Absent file: no plans. */
export async function commissionPlans(globals: GlobalOptions, io: Io, options: { required?: boolean; quiet?: boolean } = {}): Promise<Plan[]> {
  const file = join(globals.config, 'commissions.yaml');
  if (!existsSync(file)) {
    if (options.required) throw new CliError(`no commission plans: ${file} does not exist`, EXIT_USAGE);
    if (!options.quiet) io.err(`warning: no commission plans (${file} does not exist)`);
    return [];
  }
  const { plans, errors } = await loadPlans(file);
  if (errors.length > 0) throw new CliError(`the commission plans are invalid:\n${errors.map((e) => '  ' + formatPlanError(e)).join('\n')}`, EXIT_USAGE);
  return plans;
}

function checkMonth(month: string | undefined): void {
  if (month !== undefined && !isMonth(month)) throw new CliError(`--month must be YYYY-MM, got ${JSON.stringify(month)}`, EXIT_USAGE);
}

/** `commissions [--affiliate A] [--month YYYY-MM] [--partner P] [--plan X] [--lines]`: totals per affiliate, month and plan; the lines behind them; entries held for FX rates and, apart, for review. */
export async function commissionsCommand(
  globals: GlobalOptions,
  args: { affiliate?: string; month?: string; partner?: string; plan?: string; lines?: boolean },
  io: Io,
): Promise<number> {
  checkMonth(args.month);
  const file = join(globals.config, 'commissions.yaml');
  // Plans only label RevShare months open or closed here; a broken plans file must not hide the ledger.
  const plans = existsSync(file) ? (await loadPlans(file)).plans : [];
  return withStore(globals, async (store) => {
    const report = await ledgerReport(store.knex, args, { lines: args.lines === true, plans, now: store.now() });
    if (globals.json) {
      io.out(JSON.stringify({ filter: args, ...report }));
      return EXIT_OK;
    }
    if (report.totals.length === 0) io.out('no commission lines' + (Object.values(args).some((v) => v !== undefined && v !== false) ? ' for this filter' : ''));
    else {
      io.out(formatTable(
        ['AFFILIATE', 'MONTH', 'PLAN', 'KIND', 'PARTNER', 'LINES', 'STATE', 'AMOUNT USD'],
        [...report.totals.map((t) => [t.affiliate, t.month, t.plan_id, t.plan_kind, t.partner, t.lines, t.month_state ?? '-', t.amount_usd.padStart(12)]),
          ['total', '', '', '', '', report.totals.reduce((n, t) => n + t.lines, 0), '', report.total_usd.padStart(12)]],
      ));
    }
    if (report.lines) {
      io.out('');
      io.out(formatTable(
        ['ID', 'CREATED', 'PLAN', 'AFFILIATE', 'CUSTOMER', 'PERIOD', 'REASON', 'AMOUNT USD', 'TOTAL USD', 'RECORDS'],
        report.lines.map((l) => [l.id, l.created_at.slice(0, 19).replace('T', ' '), l.plan_id, l.affiliate_id, l.customer_id ?? '-', l.period, l.reason,
          l.amount_usd.padStart(10), l.total_usd.padStart(10), l.sources.slice(0, 4).join(' ') + (l.sources.length > 4 ? ` +${l.sources.length - 4}` : '')]),
      ));
    }
    if (report.held.length > 0) {
      io.out('');
      io.out(`held, waiting for FX rates (${report.held.length}): nothing is booked for these until the rate arrives (partner-sync fx import FILE.csv)`);
      io.out(formatTable(['PLAN', 'AFFILIATE', 'CUSTOMER', 'PERIOD', 'SINCE', 'MISSING RATES'],
        report.held.map((h) => [h.plan_id, h.affiliate_id, h.customer_id ?? '-', h.period, h.since.slice(0, 19).replace('T', ' '), h.missing.join(', ')])));
    }
    if (report.review_held.length > 0) {
      io.out('');
      io.out(`held for review (${report.review_held.length}): open fraud flags; withheld is booked but not to be paid, waiting is not booked; a dismissal releases them, a confirmation voids them`);
      io.out(formatTable(['PLAN', 'AFFILIATE', 'CUSTOMER', 'PERIOD', 'SINCE', 'WITHHELD USD', 'WAITING USD', 'FRAUD FLAGS'],
        report.review_held.map((h) => [h.plan_id, h.affiliate_id, h.customer_id ?? '-', h.period, h.since.slice(0, 19).replace('T', ' '),
          h.withheld_usd.padStart(10), (h.waiting_usd ?? 'FX rate missing').padStart(10), h.flags.map((f) => `#${f.id} ${f.rule}`).join(', ')])));
      io.out(`payable: ${report.payable_usd} USD of ${report.total_usd} (${report.review_withheld_usd} withheld for review)`);
    }
    return EXIT_OK;
  });
}

/**
 * `commissions recompute [--partner P] [--month M] [--affiliate A] [--repair]`: rebuilds every
 * commission from history and compares with the ledger to the cent (only the keys of the month
 * and affiliate given). Exit 1 when any difference is found (and
 * not repaired), 0 when all agree or `--repair` booked the corrections.
 */
export async function commissionsRecomputeCommand(
  globals: GlobalOptions,
  args: { partner?: string; month?: string; affiliate?: string; repair?: boolean },
  io: Io,
): Promise<number> {
  checkMonth(args.month);
  const plans = await commissionPlans(globals, io);
  return withStore(globals, async (store) => {
    if (args.partner !== undefined) await requireKnownPartner(store, args.partner);
    const started = performance.now();
    const results = await recompute(store, plans, { ...args, runId: `recompute-${store.now()}` });
    const differences = results.flatMap((r) => r.differences);
    const derived = results.reduce((n, r) => n + r.derived.customer_days + r.derived.affiliate_months + r.derived.attributions, 0);
    const ms = Math.round(performance.now() - started);
    if (globals.json) {
      io.out(JSON.stringify({ partners: results, agree: differences.length === 0, differences: differences.length, derived_state_differences: derived, repaired: args.repair === true, duration_ms: ms }));
    } else {
      for (const r of results) {
        io.out(`${r.partner} (${r.variant}): ${r.keys} keys recomputed, ${r.differences.length} differ from the ledger, ${r.held.length} held` +
          (r.derived.customer_days + r.derived.affiliate_months + r.derived.attributions > 0 ? `; derived state differs: ${r.derived.customer_days} customer-days, ${r.derived.affiliate_months} affiliate months, ${r.derived.attributions} attributions` : '') +
          (r.repaired ? `; repaired: ${r.repaired.lines} lines, ${r.repaired.net_usd} USD` : ''));
      }
      if (results.length === 0) io.out(await nothingToRecompute(store, plans, args.partner));
      if (differences.length > 0) {
        io.out(formatTable(['PARTNER', 'PLAN', 'AFFILIATE', 'CUSTOMER', 'PERIOD', 'LEDGER USD', 'RECOMPUTED USD', 'DIFFERENCE', 'KEY'],
          differences.map((d) => [d.partner, d.plan_id, d.affiliate, d.customer ?? '-', d.period, d.ledger_usd, d.recomputed_usd, d.difference_usd, d.key]), 80));
      } else if (results.length > 0) io.out('the ledger agrees with a rebuild from history, to the cent');
    }
    return differences.length > 0 && args.repair !== true ? EXIT_FAILURE : EXIT_OK;
  });
}

/** An unknown --partner is a usage error (exit 2), not an empty success: a typo must not look like "all agree". */
async function requireKnownPartner(store: Store, partner: string): Promise<void> {
  const known: { partner_id: string }[] = await store.knex('partners').select('partner_id').orderBy('partner_id');
  if (known.some((k) => k.partner_id === partner)) return;
  if (await store.knex('commission_ledger').where('partner_id', partner).first('id')) return;
  throw new CliError(`unknown partner ${partner}: nothing is loaded for it and it has no ledger lines (partners in the store: ${known.map((k) => k.partner_id).join(', ') || 'none'})`, EXIT_USAGE);
}

/** Why a recompute found nothing to rebuild, in the store's own terms. */
async function nothingToRecompute(store: Store, plans: readonly Plan[], partner: string | undefined): Promise<string> {
  const planned = [...new Set(plans.map((p) => p.partner))].filter((p) => partner === undefined || p === partner).sort();
  if (planned.length > 0) return `nothing to recompute: plans exist for ${planned.length === 1 ? 'partner' : 'partners'} ${planned.join(', ')} but nothing is loaded for ${planned.length === 1 ? 'it' : 'them'} yet`;
  if (partner !== undefined) return `nothing to recompute: partner ${partner} has no commission plans and no ledger lines`;
  const loaded: { partner_id: string }[] = await store.knex('partners').select('partner_id').orderBy('partner_id');
  return `nothing to recompute: no commission plans` + (loaded.length > 0 ? ` for the loaded partners (${loaded.map((p) => p.partner_id).join(', ')})` : ' and nothing loaded') + ', and no ledger lines';
}

