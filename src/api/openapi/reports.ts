/**
 * The report routes in the OpenAPI document (../openapi.ts): their parameters, answer schemas and
 * paths (docs/reports.md).
 */
import { REPORT_COLUMNS } from '../../reports/affiliates.js';
import { FUNNEL_GROUPS } from '../../reports/funnel.js';
import { security } from './components.js';
import { json, ref, type JsonObject } from './schemas.js';

/** Query parameters of the report routes (docs/reports.md). */
export function reportParameters(): JsonObject {
  const day = (name: string, description: string) => ({ name, in: 'query', description, schema: { type: 'string', format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$' } });
  return {
    ReportFrom: day('from', 'First UTC day of the period, YYYY-MM-DD (inclusive).'),
    ReportTo: day('to', 'Last UTC day of the period, YYYY-MM-DD (inclusive); not before from.'),
    ReportAffiliate: {
      name: 'affiliate',
      in: 'query',
      description: 'Only this affiliate. A credential made for one affiliate sees only its own rows whether or not this is given; naming another affiliate is 403.',
      schema: { type: 'string' },
    },
    ReportCampaign: { name: 'campaign', in: 'query', description: 'Only this campaign.', schema: { type: 'string' } },
    ReportFormat: {
      name: 'format',
      in: 'query',
      description: 'json (default) or csv. Without it, `Accept: text/csv` also selects CSV.',
      schema: { type: 'string', enum: ['json', 'csv'], default: 'json' },
    },
  };
}

export function reportSchemas(): JsonObject {
  const money = { type: 'string', pattern: '^-?\\d+\\.\\d{2}$', description: 'USD amount, exact decimal as a string.' };
  const nullableMoney = { type: ['string', 'null'], description: 'USD amount as a string; null when no commission plan applies.' };
  const count = { type: 'integer', minimum: 0 };
  const filter = {
    type: 'object',
    description: 'The filter the report was computed for: the caller\'s partner and the parameters given.',
    required: ['partner'],
    properties: { partner: { type: 'string' }, affiliate: { type: 'string' }, campaign: { type: 'string' }, from: { type: 'string', format: 'date' }, to: { type: 'string', format: 'date' }, by: { type: 'string' } },
  };
  return {
    AffiliateReportRow: {
      type: 'object',
      description: 'One row of the affiliate report: one affiliate and one day, month or campaign. Money in USD as exact decimal strings.',
      required: ['partner', 'affiliate', 'registrations', 'ftd_count', 'ftd_usd', 'depositors', 'deposit_count', 'deposits_usd'],
      properties: {
        partner: { type: 'string' },
        affiliate: { type: 'string' },
        day: { type: 'string', format: 'date', description: 'With by=day.' },
        month: { type: 'string', pattern: '^\\d{4}-\\d{2}$', description: 'With by=month.' },
        campaign: { type: ['string', 'null'], description: 'With by=campaign.' },
        registrations: count,
        ftd_count: count,
        ftd_usd: money,
        depositors: count,
        deposit_count: count,
        deposits_usd: money,
        withdrawals_usd: money,
        bonuses_usd: money,
        net_deposits_usd: money,
        bets_usd: money,
        ggr_usd: money,
        ngr_usd: money,
        challenge_purchases: count,
        challenge_purchases_by_product: {
          type: 'array',
          items: {
            type: 'object',
            required: ['challenge_type', 'account_size', 'purchases', 'fees_usd'],
            properties: { challenge_type: { type: ['string', 'null'] }, account_size: { type: ['string', 'null'] }, purchases: count, fees_usd: money },
          },
        },
        challenge_fees_usd: money,
        reset_fees_usd: money,
        refunds_usd: money,
        payouts_usd: money,
        unconverted: count,
        commissions_earned_usd: nullableMoney,
        commissions_clawed_back_usd: nullableMoney,
        commissions_net_usd: nullableMoney,
        commissions_held: { type: ['integer', 'null'], minimum: 0 },
      },
    },
    AffiliateReport: {
      type: 'object',
      required: ['filter', 'rows'],
      properties: { filter, rows: { type: 'array', items: ref('AffiliateReportRow') } },
    },
    ReportExplanation: {
      type: 'object',
      description: 'The stored records behind one cell of the affiliate report, and their total (the cell\'s value). No names, e-mail addresses or click ids.',
      required: ['column', 'cell', 'total', 'records'],
      properties: {
        column: { type: 'string', enum: [...REPORT_COLUMNS] },
        cell: {
          type: 'object',
          required: ['affiliate', 'from', 'to'],
          properties: { partner: { type: 'string' }, affiliate: { type: 'string' }, campaign: { type: 'string' }, from: { type: 'string', format: 'date' }, to: { type: 'string', format: 'date' } },
        },
        total: { oneOf: [{ type: 'number' }, { type: 'string' }], description: 'A count (number) or a USD amount (string).' },
        records: { type: 'array', items: { type: 'object', additionalProperties: true } },
      },
    },
    FunnelRow: {
      type: 'object',
      description: 'Prop-trading customers by phase reached, failures by phase, conversion rates (null when nobody reached the earlier phase) and median days between phases.',
      required: ['signups', 'phase_1', 'phase_2', 'funded', 'failed', 'conversion', 'median_days'],
      properties: {
        group: { type: ['string', 'null'], description: 'The group\'s value, with by.' },
        signups: count,
        phase_1: count,
        phase_2: count,
        funded: count,
        failed: { type: 'object', required: ['phase_1', 'phase_2', 'funded', 'unknown'], properties: { phase_1: count, phase_2: count, funded: count, unknown: count } },
        conversion: {
          type: 'object',
          required: ['signup_phase_1', 'phase_1_phase_2', 'phase_2_funded', 'overall'],
          properties: Object.fromEntries(['signup_phase_1', 'phase_1_phase_2', 'phase_2_funded', 'overall'].map((k) => [k, { type: ['number', 'null'] }])),
        },
        median_days: {
          type: 'object',
          required: ['signup_phase_1', 'phase_1_phase_2', 'phase_2_funded'],
          properties: Object.fromEntries(['signup_phase_1', 'phase_1_phase_2', 'phase_2_funded'].map((k) => [k, { type: ['number', 'null'] }])),
        },
      },
    },
    FunnelReport: {
      type: 'object',
      required: ['filter', 'rows'],
      properties: { filter, rows: { type: 'array', items: ref('FunnelRow') } },
    },
  };
}

export function reportPaths(): JsonObject {
  const p = (name: string) => ref(name, 'parameters');
  const errors = {
    '400': { description: 'bad_request: a parameter is malformed (a day not YYYY-MM-DD, from after to, an unknown by, column or format); invalid_parameter: a parameter given more than once. The message names it.', content: json(ref('Error')) },
    '401': ref('Unauthorized', 'responses'),
    '403': {
      description: "insufficient_scope: the token lacks read; forbidden: an affiliate's credential asked for another affiliate; wrong_variant: the funnel asked with an iGaming token.",
      content: json(ref('Error')),
    },
    '429': ref('TooManyRequests', 'responses'),
  };
  const csvOrJson = (schema: string, what: string) => ({
    description: `${what}: JSON, or CSV (format=csv or Accept: text/csv) with a header line and one line per row.`,
    content: { ...json(ref(schema)), 'text/csv': { schema: { type: 'string' } } },
  });
  const auth = 'Read scope. Only the rows of the token\'s partner; a credential made for one affiliate sees only that affiliate\'s rows.';
  return {
    '/api/v1/reports/affiliates': {
      get: {
        operationId: 'report-affiliates',
        tags: ['reports'],
        summary: 'Affiliate report: registrations, FTDs, deposits, revenue and commissions per affiliate and day, month or campaign',
        description: auth,
        security: security('read'),
        parameters: [
          p('ReportFrom'),
          p('ReportTo'),
          { name: 'by', in: 'query', description: 'Row grain.', schema: { type: 'string', enum: ['month', 'day', 'campaign'], default: 'month' } },
          p('ReportAffiliate'),
          p('ReportCampaign'),
          p('ReportFormat'),
        ],
        responses: { '200': csvOrJson('AffiliateReport', 'The report'), ...errors },
      },
    },
    '/api/v1/reports/affiliates/explain': {
      get: {
        operationId: 'report-affiliates-explain',
        tags: ['reports'],
        summary: 'The stored records behind one cell of the affiliate report',
        description: `${auth} Name the cell's period with day, month, or from and to.`,
        security: security('read'),
        parameters: [
          { name: 'column', in: 'query', required: true, description: 'The report column of the cell.', schema: { type: 'string', enum: [...REPORT_COLUMNS] } },
          { ...(reportParameters().ReportAffiliate as JsonObject), description: 'The affiliate of the cell: required, except with a credential made for one affiliate (its own then; another one is 403).' },
          { name: 'day', in: 'query', description: 'The cell is this UTC day (YYYY-MM-DD).', schema: { type: 'string', format: 'date' } },
          { name: 'month', in: 'query', description: 'The cell is this month (YYYY-MM).', schema: { type: 'string', pattern: '^\\d{4}-\\d{2}$' } },
          p('ReportFrom'),
          p('ReportTo'),
          p('ReportCampaign'),
        ],
        responses: { '200': { description: 'The records and their total.', content: json(ref('ReportExplanation')) }, ...errors },
      },
    },
    '/api/v1/reports/funnel': {
      get: {
        operationId: 'report-funnel',
        tags: ['reports'],
        summary: 'Prop-trading funnel: signups, phases reached, failures, conversion and median days',
        description: `${auth} Customers who signed up in the period (from, to). Prop-trading partners only: an iGaming token is 403 wrong_variant.`,
        security: security('read'),
        parameters: [
          { name: 'by', in: 'query', description: 'Group rows by this; one total row without it.', schema: { type: 'string', enum: [...FUNNEL_GROUPS] } },
          p('ReportFrom'),
          p('ReportTo'),
          p('ReportAffiliate'),
          p('ReportFormat'),
        ],
        responses: { '200': csvOrJson('FunnelReport', 'The funnel'), ...errors },
      },
    },
  };
}
