import { FUNNEL_CELLS, FUNNEL_GROUPS, NO_VALUE, funnelExplain, funnelReport, type FunnelCell, type FunnelFilters, type FunnelGroup, type FunnelRow } from '../../reports/funnel.js';
import { withStore, type GlobalOptions } from '../context.js';
import { CliError, EXIT_OK, type Io } from '../io.js';
import { formatTable } from '../table.js';

export interface ReportFunnelArgs {
  partner?: string;
  affiliate?: string;
  from?: string;
  to?: string;
  by?: string;
  csv?: boolean;
  json?: boolean;
  explain?: string;
  group?: string;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

function parseFilters(args: ReportFunnelArgs): FunnelFilters {
  for (const [name, value] of [['--from', args.from], ['--to', args.to]] as const) {
    if (value !== undefined && (!DAY.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`)))) {
      throw new CliError(`${name} must be a day YYYY-MM-DD (UTC), got ${JSON.stringify(value)}`);
    }
  }
  if (args.from !== undefined && args.to !== undefined && args.from > args.to) throw new CliError(`--from ${args.from} is after --to ${args.to}`);
  if (args.by !== undefined && !(FUNNEL_GROUPS as readonly string[]).includes(args.by)) {
    throw new CliError(`--by must be one of ${FUNNEL_GROUPS.join(', ')}, got ${JSON.stringify(args.by)}`);
  }
  const filters: FunnelFilters = {};
  if (args.partner !== undefined) filters.partner = args.partner;
  if (args.affiliate !== undefined) filters.affiliate = args.affiliate;
  if (args.from !== undefined) filters.from = args.from;
  if (args.to !== undefined) filters.to = args.to;
  if (args.by !== undefined) filters.by = args.by as FunnelGroup;
  return filters;
}

const pct = (r: number | null): string => (r === null ? '-' : `${(r * 100).toFixed(1)}%`);
const days = (d: number | null): string => (d === null ? '-' : d.toFixed(2));
const groupText = (row: FunnelRow): string => (row.group === null ? NO_VALUE : String(row.group));

const CSV_COLUMNS = [
  'signups', 'phase_1', 'phase_2', 'funded', 'failed_phase_1', 'failed_phase_2', 'failed_funded', 'failed_unknown',
  'conversion_signup_phase_1', 'conversion_phase_1_phase_2', 'conversion_phase_2_funded', 'conversion_overall',
  'median_days_signup_phase_1', 'median_days_phase_1_phase_2', 'median_days_phase_2_funded',
] as const;

function csvCell(value: string | number | null): string {
  if (value === null) return '';
  const s = String(value);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function csvLine(by: FunnelGroup | undefined, row: FunnelRow): string {
  const values: (string | number | null)[] = [
    row.signups, row.phase_1, row.phase_2, row.funded, row.failed.phase_1, row.failed.phase_2, row.failed.funded, row.failed.unknown,
    row.conversion.signup_phase_1, row.conversion.phase_1_phase_2, row.conversion.phase_2_funded, row.conversion.overall,
    row.median_days.signup_phase_1, row.median_days.phase_1_phase_2, row.median_days.phase_2_funded,
  ];
  return (by ? [row.group ?? null, ...values] : values).map(csvCell).join(',');
}

/**
 * `report funnel [--partner P] [--affiliate A] [--from D --to D] [--by affiliate|challenge_type|
 * account_size|cohort] [--json|--csv] [--explain CELL [--group VALUE]]`: the prop-trading funnel
 * (src/reports/funnel.ts); `--explain` lists the customers behind one cell with their phase history.
 */
export async function reportFunnelCommand(globals: GlobalOptions, args: ReportFunnelArgs, io: Io): Promise<number> {
  const filters = parseFilters(args);
  const json = Boolean(args.json ?? globals.json);
  if (json && args.csv) throw new CliError('--json and --csv exclude each other');
  if (args.explain !== undefined && !(FUNNEL_CELLS as readonly string[]).includes(args.explain)) {
    throw new CliError(`--explain must name a cell: ${FUNNEL_CELLS.join(', ')}; got ${JSON.stringify(args.explain)}`);
  }
  if (args.group !== undefined && args.explain === undefined) throw new CliError('--group goes with --explain');
  if (args.explain !== undefined && filters.by && args.group === undefined) {
    throw new CliError(`--explain with --by ${filters.by} needs --group VALUE (the row's ${filters.by}; ${NO_VALUE} for customers without one)`);
  }
  return withStore(globals, async (store) => {
    if (args.explain !== undefined) {
      const customers = await funnelExplain(store.knex, filters, args.explain as FunnelCell, args.group);
      if (json) io.out(JSON.stringify({ filter: filters, cell: args.explain, group: args.group ?? null, customers }));
      else if (args.csv) {
        io.out('partner,customer_id,affiliate_id,campaign_id,challenge_type,account_size,signup_date,days,seq,phase,observed_at,time_source,failed_from');
        for (const c of customers) {
          for (const e of c.history.length > 0 ? c.history : [null]) {
            io.out([c.partner_id, c.customer_id, c.affiliate_id, c.campaign_id, c.challenge_type, c.account_size, c.signup_date, c.days ?? null,
              e?.seq ?? null, e?.phase ?? null, e?.observed_at ?? null, e?.time_source ?? null, e?.failed_from ?? null].map(csvCell).join(','));
          }
        }
      } else {
        io.out(`${customers.length} customer(s) behind ${args.explain}${filters.by ? ` for ${filters.by} ${args.group}` : ''}${args.explain.startsWith('days_') ? ', in order of their days (the median is the middle one, or the mean of the middle two)' : ''}`);
        if (customers.length > 0) {
          const withDays = args.explain.startsWith('days_');
          io.out(formatTable(['PARTNER', 'CUSTOMER', 'AFFILIATE', 'CHALLENGE', 'SIZE', 'SIGNUP', ...(withDays ? ['DAYS'] : []), 'PHASE HISTORY'], customers.map((c) => [
            c.partner_id, c.customer_id, c.affiliate_id, c.challenge_type ?? '-', c.account_size ?? '-', c.signup_date.slice(0, 19) + 'Z', ...(withDays ? [days(c.days ?? null)] : []),
            c.history.map((e) => `${e.phase}${e.failed_from ? `(from ${e.failed_from})` : ''}@${e.observed_at ? e.observed_at.slice(0, 19) + 'Z' : 'unknown'}`).join(' → ') || '(no phase sent)',
          ])));
        }
      }
      return EXIT_OK;
    }
    const rows = await funnelReport(store.knex, filters);
    if (json) {
      io.out(JSON.stringify({ filter: filters, rows }));
    } else if (args.csv) {
      io.out([...(filters.by ? [filters.by] : []), ...CSV_COLUMNS].join(','));
      for (const row of rows) io.out(csvLine(filters.by, row));
    } else if (rows.length === 0) {
      io.out('no prop-trading customers' + (Object.keys(filters).some((k) => k !== 'by') ? ' for this filter' : ''));
    } else {
      io.out(formatTable(
        [...(filters.by ? [filters.by.toUpperCase()] : []), 'SIGNUPS', 'PHASE_1', 'PHASE_2', 'FUNDED', 'FAILED P1/P2/F/?', 'S→P1', 'P1→P2', 'P2→F', 'OVERALL', 'DAYS S→P1', 'P1→P2', 'P2→F'],
        rows.map((r) => [
          ...(filters.by ? [groupText(r)] : []),
          r.signups, r.phase_1, r.phase_2, r.funded, `${r.failed.phase_1}/${r.failed.phase_2}/${r.failed.funded}/${r.failed.unknown}`,
          pct(r.conversion.signup_phase_1), pct(r.conversion.phase_1_phase_2), pct(r.conversion.phase_2_funded), pct(r.conversion.overall),
          days(r.median_days.signup_phase_1), days(r.median_days.phase_1_phase_2), days(r.median_days.phase_2_funded),
        ]),
      ));
      io.out('failed P1/P2/F/?: customers whose last phase is failed, by the stage they failed at (phase_1, phase_2, funded, unknown).');
      io.out('conversion: share of the previous stage; overall: funded / signups. Days: medians over customers whose both times are known.');
    }
    return EXIT_OK;
  });
}
