/**
 * Reports over HTTP (docs/reports.md): the affiliate report, the drill-down of one of its cells,
 * and the prop-trading funnel, for the caller's partner only. JSON by default; CSV with
 * `format=csv` or `Accept: text/csv`. A credential made for one affiliate (`clients add
 * --affiliate A`) sees that affiliate's rows only; asking for another is 403. No report lists
 * names, e-mail addresses or click ids.
 *
 *   GET /api/v1/reports/affiliates?from=2026-10-01&to=2026-10-31&by=month|day|campaign[&affiliate=A][&campaign=C][&format=csv]
 *   GET /api/v1/reports/affiliates/explain?column=ftd_count&affiliate=A&month=2026-10 (or day=D, or from=D&to=D)[&campaign=C]
 *   GET /api/v1/reports/funnel?by=affiliate|challenge_type|account_size|cohort[&from=D&to=D][&affiliate=A]   (prop-trading tokens; iGaming 403 wrong_variant)
 *
 * Every parameter is given once (a repeated one is 400 invalid_parameter, ../server.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isDay, isMonth, lastDayOf } from '../../kernel/dates.js';
import { affiliateReport, reportCsv, type Grain, type ReportFilter } from '../../reports/affiliates.js';
import { explainCell, isReportColumn, type ExplainCell } from '../../reports/explain.js';
import { FUNNEL_GROUPS, funnelReport, type FunnelGroup } from '../../reports/funnel.js';
import { requirePartnerAccess, requireToken } from '../auth.js';
import type { Principal, RouteModule } from '../types.js';

type Query = Record<string, string | undefined>;

class BadRequest extends Error {}

const GRAINS: readonly Grain[] = ['day', 'month', 'campaign'];

function day(query: Query, name: string): string | undefined {
  const value = query[name];
  if (value !== undefined && !isDay(value)) throw new BadRequest(`${name} must be a UTC day YYYY-MM-DD, got ${JSON.stringify(value)}`);
  return value;
}

/** The affiliate the caller may see: its own for an affiliate credential (another one asked for is refused), else the one asked for. */
function affiliateOf(principal: Principal, query: Query, reply: FastifyReply): string | undefined | null {
  if (principal.affiliate === undefined) return query.affiliate;
  if (query.affiliate !== undefined && query.affiliate !== principal.affiliate) {
    void reply.code(403).send({ error: 'forbidden', message: `this credential sees only affiliate ${principal.affiliate}` });
    return null;
  }
  return principal.affiliate;
}

function wantsCsv(request: FastifyRequest, query: Query): boolean {
  if (query.format !== undefined) {
    if (query.format !== 'csv' && query.format !== 'json') throw new BadRequest(`format must be json or csv, got ${JSON.stringify(query.format)}`);
    return query.format === 'csv';
  }
  return /\btext\/csv\b/.test(request.headers.accept ?? '');
}

function filterOf(principal: Principal, query: Query, affiliate: string | undefined): ReportFilter {
  const filter: ReportFilter = { partner: principal.partner };
  const from = day(query, 'from');
  const to = day(query, 'to');
  if (from && to && from > to) throw new BadRequest(`from ${from} is after to ${to}`);
  if (affiliate !== undefined) filter.affiliate = affiliate;
  if (query.campaign !== undefined) filter.campaign = query.campaign;
  if (from) filter.from = from;
  if (to) filter.to = to;
  return filter;
}

const handle = (work: (request: FastifyRequest, reply: FastifyReply, principal: Principal, query: Query) => Promise<unknown>) =>
  async (request: FastifyRequest, reply: FastifyReply) => {
    const principal = request.principal;
    if (!principal) throw new Error('reports routes require a token');
    try {
      return await work(request, reply, principal, request.query as Query);
    } catch (error) {
      if (error instanceof BadRequest) return reply.code(400).send({ error: 'bad_request', message: error.message });
      throw error;
    }
  };

export const reportRoutes: RouteModule = (app, { store }) => {
  const onRequest = requireToken('read');

  app.get('/api/v1/reports/affiliates', { onRequest }, handle(async (request, reply, principal, query) => {
    const affiliate = affiliateOf(principal, query, reply);
    if (affiliate === null) return reply;
    const by = (query.by ?? 'month') as Grain;
    if (!GRAINS.includes(by)) throw new BadRequest(`by must be one of ${GRAINS.join(', ')}, got ${JSON.stringify(query.by)}`);
    const csv = wantsCsv(request, query);
    const report = await affiliateReport(store, filterOf(principal, query, affiliate), by);
    if (csv) return reply.type('text/csv; charset=utf-8').send(reportCsv(report));
    return reply.send(report);
  }));

  app.get('/api/v1/reports/affiliates/explain', { onRequest }, handle(async (_request, reply, principal, query) => {
    const affiliate = affiliateOf(principal, query, reply);
    if (affiliate === null) return reply;
    if (!affiliate) throw new BadRequest('affiliate is required: the cell is one affiliate\'s');
    const column = query.column ?? '';
    if (!isReportColumn(column)) throw new BadRequest(`unknown column ${JSON.stringify(column)}`);
    const d = day(query, 'day');
    if (query.month !== undefined && !isMonth(query.month)) throw new BadRequest(`month must be YYYY-MM, got ${JSON.stringify(query.month)}`);
    const from = d ?? (query.month ? `${query.month}-01` : day(query, 'from'));
    const to = d ?? (query.month ? lastDayOf(query.month) : day(query, 'to'));
    if (!from || !to) throw new BadRequest('name the cell\'s period: day=D, month=M, or from=D&to=D');
    const cell: ExplainCell = { partner: principal.partner, affiliate, from, to };
    if (query.campaign !== undefined) cell.campaign = query.campaign;
    return reply.send(await explainCell(store.knex, column, cell));
  }));

  // The funnel is prop-trading's (phases of challenge accounts): an iGaming token is refused like
  // any call into the other variant's paths.
  app.get('/api/v1/reports/funnel', { onRequest: requirePartnerAccess('read', 'prop-trading') }, handle(async (request, reply, principal, query) => {
    const affiliate = affiliateOf(principal, query, reply);
    if (affiliate === null) return reply;
    const by = query.by as FunnelGroup | undefined;
    if (by !== undefined && !(FUNNEL_GROUPS as readonly string[]).includes(by)) throw new BadRequest(`by must be one of ${FUNNEL_GROUPS.join(', ')}, got ${JSON.stringify(by)}`);
    const filter = filterOf(principal, query, affiliate);
    const rows = await funnelReport(store.knex, { partner: principal.partner, ...(filter.affiliate ? { affiliate: filter.affiliate } : {}), ...(filter.from ? { from: filter.from } : {}), ...(filter.to ? { to: filter.to } : {}), ...(by ? { by } : {}) });
    if (wantsCsv(request, query)) {
      const header = [...(by ? ['group'] : []), 'signups', 'phase_1', 'phase_2', 'funded', 'failed_phase_1', 'failed_phase_2', 'failed_funded', 'failed_unknown',
        'conversion_signup_phase_1', 'conversion_phase_1_phase_2', 'conversion_phase_2_funded', 'conversion_overall', 'median_days_signup_phase_1', 'median_days_phase_1_phase_2', 'median_days_phase_2_funded'];
      const text = (v: unknown) => (v === null || v === undefined ? '' : /[",\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v));
      const lines = rows.map((r) => [...(by ? [r.group] : []), r.signups, r.phase_1, r.phase_2, r.funded, r.failed.phase_1, r.failed.phase_2, r.failed.funded, r.failed.unknown,
        r.conversion.signup_phase_1, r.conversion.phase_1_phase_2, r.conversion.phase_2_funded, r.conversion.overall,
        r.median_days.signup_phase_1, r.median_days.phase_1_phase_2, r.median_days.phase_2_funded].map(text).join(','));
      return reply.type('text/csv; charset=utf-8').send([header.join(','), ...lines].join('\n') + '\n');
    }
    return reply.send({ filter: { partner: principal.partner, ...filter, ...(by ? { by } : {}) }, rows });
  }));
};
