/**
 * `report affiliates`: the affiliate report from the report facts and the ledger (docs/reports.md),
 * as a table, JSON or CSV; with `--explain COLUMN` the source records behind one of its cells.
 */
import { describeUnevaluated, notCountedBy, unevaluated } from '../../store/unevaluated.js';
import { isDay, isMonth, lastDayOf } from '../../kernel/dates.js';
import { affiliateReport, cellText, reportCsv, REPORT_COLUMNS, type AffiliateReport, type Grain, type ReportColumn, type ReportFilter } from '../../reports/affiliates.js';
import { explainCell, isReportColumn, type ExplainCell } from '../../reports/explain.js';
import { withStore, type GlobalOptions } from '../context.js';
import { CliError, EXIT_OK, EXIT_USAGE, type Io } from '../io.js';
import { formatTable } from '../table.js';

export interface AffiliatesReportArgs {
  partner?: string;
  affiliate?: string;
  campaign?: string;
  from?: string;
  to?: string;
  by?: Grain;
  day?: string;
  month?: string;
  explain?: string;
  csv?: boolean;
  json?: boolean;
}

function checkDay(flag: string, value: string | undefined): void {
  if (value !== undefined && !isDay(value)) throw new CliError(`${flag} must be a UTC day YYYY-MM-DD, got ${JSON.stringify(value)}`, EXIT_USAGE);
}

/** The filter of a report request (CLI flags or HTTP query parameters); throws a usage error naming the bad flag. */
export function reportFilter(args: Pick<AffiliatesReportArgs, 'partner' | 'affiliate' | 'campaign' | 'from' | 'to'>): ReportFilter {
  checkDay('--from', args.from);
  checkDay('--to', args.to);
  if (args.from && args.to && args.from > args.to) throw new CliError(`--from ${args.from} is after --to ${args.to}`, EXIT_USAGE);
  const filter: ReportFilter = {};
  if (args.partner) filter.partner = args.partner;
  if (args.affiliate) filter.affiliate = args.affiliate;
  if (args.campaign !== undefined) filter.campaign = args.campaign;
  if (args.from) filter.from = args.from;
  if (args.to) filter.to = args.to;
  return filter;
}

/** The one cell `--explain` names: an affiliate and a day, a month, or the --from..--to range (optionally one campaign). */
export function explainTarget(args: AffiliatesReportArgs): ExplainCell {
  if (!args.affiliate) throw new CliError('--explain names one cell: give --affiliate A and --day D, --month M or --from D --to D (and --campaign C for one campaign)', EXIT_USAGE);
  checkDay('--day', args.day);
  if (args.month !== undefined && !isMonth(args.month)) throw new CliError(`--month must be YYYY-MM, got ${JSON.stringify(args.month)}`, EXIT_USAGE);
  let from: string | undefined;
  let to: string | undefined;
  if (args.day) [from, to] = [args.day, args.day];
  else if (args.month) [from, to] = [`${args.month}-01`, lastDayOf(args.month)];
  else if (args.from && args.to) [from, to] = [args.from, args.to];
  if (!from || !to) throw new CliError('--explain needs the cell\'s period: --day D, --month M, or --from D --to D', EXIT_USAGE);
  const cell: ExplainCell = { affiliate: args.affiliate, from, to };
  if (args.partner) cell.partner = args.partner;
  if (args.campaign !== undefined) cell.campaign = args.campaign;
  return cell;
}

const HEADERS: Record<ReportColumn, string> = {
  registrations: 'REG', ftd_count: 'FTD', ftd_usd: 'FTD USD', depositors: 'DEPOSITORS', deposit_count: 'DEPOSITS', deposits_usd: 'DEPOSITS USD', withdrawals_usd: 'WITHDRAWALS USD',
  bonuses_usd: 'BONUSES USD', net_deposits_usd: 'NET DEP USD', bets_usd: 'BETS USD', ggr_usd: 'GGR USD', ngr_usd: 'NGR USD', challenge_purchases: 'PURCHASES',
  challenge_purchases_by_product: 'BY PRODUCT', challenge_fees_usd: 'FEES USD', reset_fees_usd: 'RESETS USD', refunds_usd: 'REFUNDS USD', payouts_usd: 'PAYOUTS USD',
  unconverted: 'UNCONV', commissions_earned_usd: 'COMM EARNED', commissions_clawed_back_usd: 'COMM CLAWED', commissions_net_usd: 'COMM NET', commissions_held: 'COMM HELD',
};
const IGAMING: readonly ReportColumn[] = ['registrations', 'ftd_count', 'ftd_usd', 'depositors', 'deposits_usd', 'withdrawals_usd', 'bonuses_usd', 'net_deposits_usd', 'bets_usd', 'ggr_usd', 'ngr_usd'];
const PROP: readonly ReportColumn[] = ['registrations', 'challenge_purchases', 'challenge_fees_usd', 'reset_fees_usd', 'refunds_usd', 'payouts_usd', 'challenge_purchases_by_product'];
const COMMISSION: readonly ReportColumn[] = ['commissions_earned_usd', 'commissions_clawed_back_usd', 'commissions_net_usd', 'commissions_held'];

/** A terminal table: the columns of the variants present (every column is in --json and --csv). */
export function reportTable(report: AffiliateReport, variants: ReadonlySet<string>): string {
  const by = report.filter.by;
  const columns: ReportColumn[] = [];
  for (const c of [...(variants.has('igaming') ? IGAMING : []), ...(variants.has('prop-trading') ? PROP : []), 'unconverted' as const, ...(by === 'month' ? COMMISSION : [])]) {
    if (!columns.includes(c)) columns.push(c);
  }
  // The by-product text is the widest: last.
  const ordered = [...columns.filter((c) => c !== 'challenge_purchases_by_product'), ...columns.filter((c) => c === 'challenge_purchases_by_product')];
  return formatTable(['PARTNER', 'AFFILIATE', by.toUpperCase(), ...ordered.map((c) => HEADERS[c])],
    report.rows.map((r) => [r.partner, r.affiliate, (by === 'day' ? r.day : by === 'month' ? r.month : r.campaign ?? '(none)') ?? '', ...ordered.map((c) => cellText(r, c))]), 80);
}

export async function affiliatesReportCommand(globals: GlobalOptions, args: AffiliatesReportArgs, io: Io): Promise<number> {
  const json = Boolean(globals.json || args.json);
  if (json && args.csv) throw new CliError('choose one of --json and --csv', EXIT_USAGE);
  const filter = reportFilter(args);
  if (args.explain !== undefined && !isReportColumn(args.explain)) throw new CliError(`--explain: unknown column ${JSON.stringify(args.explain)}; columns: ${REPORT_COLUMNS.join(', ')}`, EXIT_USAGE);
  const cell = args.explain !== undefined ? explainTarget(args) : undefined;
  return withStore(globals, async (store) => {
    if (cell && args.explain !== undefined && isReportColumn(args.explain)) {
      const explanation = await explainCell(store.knex, args.explain, cell);
      if (json) io.out(JSON.stringify(explanation));
      else {
        io.out(`${args.explain} of affiliate ${cell.affiliate}${cell.campaign !== undefined ? `, campaign ${cell.campaign || '(none)'}` : ''}${cell.partner ? `, partner ${cell.partner}` : ''}, ${cell.from === cell.to ? cell.from : `${cell.from} to ${cell.to}`}: ${explanation.total}`);
        if (explanation.records.length === 0) io.out('no source records');
        else {
          const keys = [...new Set(explanation.records.flatMap((r) => Object.keys(r)))].filter((k) => !['basis', 'sources'].includes(k));
          io.out(formatTable(keys.map((k) => k.toUpperCase()), explanation.records.map((r) => keys.map((k) => (r[k] === null || r[k] === undefined ? '-' : typeof r[k] === 'object' ? JSON.stringify(r[k]) : String(r[k]))))));
        }
      }
      return EXIT_OK;
    }
    const report = await affiliateReport(store, filter, args.by ?? 'month');
    // Records loaded but not evaluated yet (a bulk run in progress, or one a crash stopped): the commission columns (and a bulk run's report facts) wait for them.
    const waiting = await unevaluated(store.knex, store.clock(), filter.partner);
    if (json) io.out(JSON.stringify({ ...report, unevaluated: waiting }));
    else if (args.csv) io.out(reportCsv(report).trimEnd());
    else if (report.rows.length === 0) io.out('no report rows' + (Object.keys(filter).length > 0 ? ' for this filter' : ''));
    else {
      const partners: { variant: string }[] = await store.knex('partners').whereIn('partner_id', [...new Set(report.rows.map((r) => r.partner))]).select('variant');
      io.out(reportTable(report, new Set(partners.map((p) => p.variant))));
    }
    for (const u of waiting) (json || args.csv ? io.err : io.out).call(io, `note: ${describeUnevaluated(u)}: ${notCountedBy(u)} do not count them yet`);
    return EXIT_OK;
  });
}


