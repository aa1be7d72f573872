/**
 * The served faces of the API's self-description over real HTTP: /openapi.json names exactly the
 * routes the app registers, /docs is an HTML page naming every path, /metrics counts requests by
 * route pattern and status with a latency histogram and the process metrics.
 */
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import type { RouteOptions } from 'fastify';
import { buildApi } from '../../src/api/server.js';
import { isDocumentedRoute, type ApiDeps } from '../../src/api/types.js';
import { silentLogger } from '../../src/log.js';
import { startApi, type StartedApi } from '../support/api.js';
import { loaderWithEveryJob } from '../support/loader.js';
import { STORES, type TestStore } from '../support/stores.js';

type Doc = { paths: Record<string, Record<string, unknown>>; servers: { url: string }[]; components: { schemas: Record<string, unknown> } };

/** `/api/v1/:variant/:entity` matches `/api/v1/igaming/customers`; a literal path only itself. */
const patternMatches = (pattern: string, path: string): boolean =>
  new RegExp(`^${pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z_]+/g, '[^/]+')}$`).test(path);

const sqlite = STORES.find((s) => s.name === 'sqlite') ?? (STORES[0] as (typeof STORES)[number]);

describe('API self-description: /openapi.json, /docs, /metrics', () => {
  let t: TestStore;
  let api: StartedApi;

  before(async () => {
    t = await sqlite.create();
    api = await startApi(t.store);
  });
  after(async () => {
    await api?.close();
    await t?.drop();
  });

  it('documents every route the app registers, and nothing else; routes marked config.openapi=false (a web console) are left out', async () => {
    // A second app over the same store, recording every route as fastify declares it (onRoute).
    const routes: { method: string; url: string }[] = [];
    const hidden: string[] = [];
    const store = t.store;
    const deps: ApiDeps = { store, logger: silentLogger(), loader: loaderWithEveryJob(store) };
    const app = await buildApi(deps, {
      routes: [
        (a) => {
          a.addHook('onRoute', (r: RouteOptions) => {
            if (!isDocumentedRoute(r)) return void hidden.push(`${String(r.method)} ${r.url}`);
            for (const method of [r.method].flat()) routes.push({ method: method.toLowerCase(), url: r.url });
          });
        },
        ...(await import('../../src/cli/server.js')).ROUTE_MODULES,
      ],
    });
    await app.ready();
    // The token endpoint, /healthz and /readyz are declared by the server after the route modules
    // (outside the onRoute hook above): taken from the app's own route table.
    for (const [method, url] of [['POST', '/oauth/token'], ['GET', '/healthz'], ['GET', '/readyz']] as const) {
      assert.ok(app.hasRoute({ method, url }), `${method} ${url}`);
      routes.push({ method: method.toLowerCase(), url });
    }
    assert.ok(routes.length >= 2 + 6 * 3 + 3, `${routes.length} routes seen`);
    await app.close();
    // The web console (src/console/request.ts) marks its pages so: they are served, not documented.
    for (const page of ['GET /', 'GET /console/login', 'POST /console/login', 'GET /console/partners']) assert.ok(hidden.includes(page), `${page} is a hidden console route`);
    const served = routes.filter((r) => r.method !== 'head' && r.method !== 'options');

    const res = await fetch(`${api.url}/openapi.json`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    const doc = (await res.json()) as Doc;
    assert.equal(doc.servers[0]?.url, api.url);
    const documented = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((method) => ({ method, path })));

    for (const r of served) {
      assert.ok(documented.some((d) => d.method === r.method && patternMatches(r.url, d.path)), `${r.method.toUpperCase()} ${r.url} is served but not documented`);
    }
    for (const d of documented) {
      assert.ok(served.some((r) => r.method === d.method && patternMatches(r.url, d.path)), `${d.method.toUpperCase()} ${d.path} is documented but not served`);
    }
  });

  it('serves /docs as a self-contained HTML page naming every path of the document', async () => {
    const doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as Doc;
    const res = await fetch(`${api.url}/docs`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html; charset=utf-8/);
    const html = await res.text();
    assert.match(html, /^<!DOCTYPE html>/);
    for (const path of Object.keys(doc.paths)) assert.ok(html.includes(`<code>${path}</code>`), `${path} missing from /docs`);
    assert.doesNotMatch(html, /<script|<link|src=|url\(/i);
    assert.ok(html.includes(`curl -s -X POST ${api.url}/oauth/token`));
  });

  it('counts requests by route pattern and status on /metrics, with a latency histogram and process metrics', async () => {
    const client = await api.addClient('metrics-partner', 'igaming');
    const token = await api.token(client);
    await fetch(`${api.url}/healthz?probe=1`);
    await fetch(`${api.url}/healthz?probe=2`);
    await fetch(`${api.url}/no/such/route/123`);
    await fetch(`${api.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=password' });
    const bulk = await fetch(`${api.url}/api/v1/igaming/customers/bulk`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify([1, 2, 3].map((i) => ({ customer_id: `m${i}`, signup_date: '2026-11-01T00:00:00Z', affiliate_id: 'a1' }))),
    });
    assert.equal(bulk.status, 200, await bulk.clone().text());
    const deposit = await fetch(`${api.url}/api/v1/igaming/transactions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ transaction_id: 'd1', customer_id: 'not-yet', transaction_type: 'deposit', amount_currency: 10, currency: 'EUR', transaction_date: '2026-11-02T00:00:00Z', status: 'approved' }),
    });
    assert.deepEqual({ ...((await deposit.json()) as object), request_id: '' }, { accepted: 1, loaded: 0, waiting: 1, request_id: '' });
    const res = await fetch(`${api.url}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    for (const line of [
      'partner_sync_api_requests_total{method="GET",route="/healthz",status="200"} 2',
      'partner_sync_api_requests_total{method="GET",route="(unmatched)",status="404"} 1',
      'partner_sync_api_requests_total{method="POST",route="/oauth/token",status="200"} 1',
      'partner_sync_api_requests_total{method="POST",route="/oauth/token",status="400"} 1',
      'partner_sync_api_request_duration_seconds_count{method="GET",route="/healthz",status="200"} 2',
      'partner_sync_api_request_duration_seconds_bucket{le="+Inf",method="GET",route="/healthz",status="200"} 2',
      'partner_sync_api_requests_total{method="POST",route="/api/v1/igaming/customers/bulk",status="200"} 1',
      'partner_sync_api_records_total{partner="metrics-partner",variant="igaming",entity="customers",outcome="accepted"} 3',
      'partner_sync_api_records_total{partner="metrics-partner",variant="igaming",entity="customers",outcome="loaded"} 3',
      'partner_sync_api_records_total{partner="metrics-partner",variant="igaming",entity="transactions",outcome="accepted"} 1',
      'partner_sync_api_records_total{partner="metrics-partner",variant="igaming",entity="transactions",outcome="waiting"} 1',
      // one load transaction per push here (nothing else arrived meanwhile), each of one request
      'partner_sync_push_transaction_requests_sum{entity="customers"} 1',
      'partner_sync_push_transaction_requests_count{entity="transactions"} 1',
      'partner_sync_push_transaction_seconds_count{entity="customers"} 1',
    ]) assert.ok(text.includes(`\n${line}\n`), `missing ${line} in\n${text}`);
    // The raw URL (with its query or unknown path) is never a label.
    assert.doesNotMatch(text, /probe=|no\/such/);
    for (const name of ['process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'process_cpu_seconds_total']) assert.ok(text.includes(`\n# TYPE ${name} `), name);
  });

  it('answers as documented: a push, a 422, a list page, a 401 and a token match the document\'s schemas and headers', async () => {
    const doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as Doc & { components: { responses: Record<string, { headers?: Record<string, unknown> }> } };
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    ajvFormats.default(ajv, ['date-time', 'email', 'date']);
    ajv.addSchema({ $id: 'doc', components: doc.components }, 'doc');
    const conforms = (name: string, body: unknown) => {
      const check = ajv.getSchema(`doc#/components/schemas/${name}`);
      assert.ok(check, name);
      assert.ok(check(body), `${name}: ${JSON.stringify(check.errors)} in ${JSON.stringify(body)}`);
    };
    const client = await api.addClient('conform-partner', 'prop-trading', ['read', 'write']);
    const token = await api.token(client);
    const tokenRes = await fetch(`${api.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret }),
    });
    conforms('TokenResponse', await tokenRes.json());
    const post = (path: string, body: unknown, auth = `Bearer ${token}`) =>
      fetch(`${api.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: auth }, body: JSON.stringify(body) });
    const ok = await post('/api/v1/prop-trading/customers/bulk', [{ customer_id: 'p1', signup_date: '2026-11-01T00:00:00Z', affiliate_id: 'a1', phase: 'phase_1' }]);
    assert.equal(ok.status, 200);
    conforms('PushResult', await ok.json());
    const bad = await post('/api/v1/prop-trading/customers/bulk', [{ customer_id: '', signup_date: 'yesterday' }, { ['__proto__']: 1 }]);
    assert.equal(bad.status, 422);
    conforms('ValidationError', await bad.json());
    const page = await fetch(`${api.url}/api/v1/prop-trading/customers?per_page=1`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(page.status, 200);
    const body = (await page.json()) as { data: unknown[]; meta: unknown };
    conforms('PageMeta', body.meta);
    for (const record of body.data) conforms('PropTradingCustomer', record);
    const badQuery = await fetch(`${api.url}/api/v1/prop-trading/customers?per_page=501`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(badQuery.status, 422);
    conforms('ParameterError', await badQuery.json());
    const denied = await post('/api/v1/prop-trading/customers', {}, 'Bearer not-a-token');
    assert.equal(denied.status, 401);
    conforms('Error', await denied.json());
    for (const header of Object.keys(doc.components.responses.Unauthorized?.headers ?? {})) assert.ok(denied.headers.get(header), header);
    const report = await fetch(`${api.url}/api/v1/reports/affiliates?from=2026-11-01&to=2026-11-30&by=day`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(report.status, 200);
    conforms('AffiliateReport', await report.json());
    const funnel = await fetch(`${api.url}/api/v1/reports/funnel?by=affiliate`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(funnel.status, 200);
    const funnelBody = (await funnel.json()) as { rows: unknown[] };
    assert.equal(funnelBody.rows.length, 1);
    conforms('FunnelReport', funnelBody);
    const csv = await fetch(`${api.url}/api/v1/reports/affiliates?format=csv`, { headers: { authorization: `Bearer ${token}` } });
    assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);
    const badReport = await fetch(`${api.url}/api/v1/reports/affiliates?from=2026-13`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(badReport.status, 400);
    conforms('Error', await badReport.json());
    const forbidden = await post('/api/v1/igaming/customers', {});
    assert.equal(forbidden.status, 403);
    conforms('Error', await forbidden.json());
  });
});
