import assert from 'node:assert/strict';
import type { Sandbox } from '../../src/sandbox/server.js';
import { getPage, sandboxFor, token, type ManualClock } from './helpers.js';

describe('sandbox /_sandbox/ endpoints', () => {
  let sandbox: Sandbox & { clock: ManualClock };
  beforeEach(async () => (sandbox = await sandboxFor({ customers: 10 })));
  afterEach(() => sandbox.close());

  const admin = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> => {
    const res = await fetch(`${sandbox.url}/_sandbox${path}`, {
      method,
      ...(body === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('GET /_sandbox describes the data set', async () => {
    const { status, body } = await admin('GET', '');
    assert.equal(status, 200);
    assert.equal(body.seed, 11);
    assert.equal(body.from, '2026-11-01');
    assert.equal(body.to, '2026-11-30');
    assert.deepEqual(Object.keys(body.variants as object), ['igaming', 'prop-trading']);
  });

  it('GET /_sandbox/stats needs no token and counts partner requests only', async () => {
    await token(sandbox);
    await fetch(`${sandbox.url}/api/v1/igaming/customers`);
    const { status, body } = await admin('GET', '/stats');
    assert.equal(status, 200);
    assert.equal(body.requests, 2);
    assert.deepEqual(body.requestsByPath, { '/oauth/token': 1, '/api/v1/igaming/customers': 1 });
    assert.equal(body.unauthorized, 1);
    assert.equal(body.tokensIssued, 1);
    assert.equal((await admin('POST', '/stats/reset')).body.requests, 0);
  });

  it('POST /_sandbox/faults merges into the running faults; bad ones are 400 naming them', async () => {
    let res = await admin('POST', '/faults', { throttleEvery: 4, duplicateAcrossPages: true });
    assert.equal(res.status, 200);
    assert.equal(sandbox.faults.throttleEvery, 4);
    assert.equal(sandbox.faults.duplicateAcrossPages, true);
    assert.equal(res.body.errorRate, 0);
    res = await admin('POST', '/faults', { tokenTtlSeconds: 5 });
    assert.equal(sandbox.faults.tokenTtlSeconds, 5);
    res = await admin('POST', '/faults', { tokenTtlSeconds: null });
    assert.equal(sandbox.faults.tokenTtlSeconds, undefined);
    res = await admin('POST', '/faults', { errorRate: 'lots', latency: 5 });
    assert.equal(res.status, 400);
    assert.match(String(res.body.error_description), /errorRate: must be a number from 0 to 1, got "lots"; unknown fault "latency"/);
    assert.equal(sandbox.faults.errorRate, 0, 'nothing applied from a bad patch');
    const bad = await fetch(`${sandbox.url}/_sandbox/faults`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{' });
    assert.equal(bad.status, 400);
  });

  it('mutation endpoints change the data the API serves', async () => {
    const access = await token(sandbox);
    let res = await admin('POST', '/prop-trading/customers', { record: { customer_id: 'ptc-000001', phase: 'funded' }, at: '2026-12-01T09:00:00.000001Z' });
    assert.equal(res.status, 200);
    assert.equal((res.body.data as Record<string, unknown>[])[0]?.phase, 'funded');
    const changed = await getPage(sandbox, access, '/api/v1/prop-trading/customers', { modified_since: '2026-12-01T09:00:00.000001Z' });
    assert.deepEqual(changed.data.map((c) => [c.customer_id, c.phase, c.last_modified_date]), [['ptc-000001', 'funded', '2026-12-01T09:00:00.000001Z']]);

    const tx = sandbox.data.transactions('igaming')[0]!;
    res = await admin('POST', `/igaming/transactions/${String(tx.transaction_id)}/status`, { status: 'reversed' });
    assert.equal((res.body.data as Record<string, unknown>).status, 'reversed');
    assert.equal((res.body.data as Record<string, unknown>).updated_at, '2026-12-01T10:00:00.000Z', 'the sandbox clock');
    assert.equal((await admin('POST', '/igaming/transactions/nope/status', { status: 'x' })).status, 404);

    res = await admin('POST', '/igaming/transactions', { records: [{ transaction_id: 'adm-1', customer_id: 'igc-000001', status: 'pending' }] });
    assert.equal(sandbox.data.transaction('igaming', 'adm-1')?.status, 'pending');

    const row = { date: '2026-11-30', customer_id: 'igc-000002', game_type: 'bingo', currency: 'EUR', total_bets: 5 };
    res = await admin('POST', '/igaming/activity', { records: [row, { ...row, total_bets: 6 }] });
    assert.deepEqual(res.body.results, ['added', 'replaced']);
    assert.deepEqual((await admin('GET', '/igaming/activity?date=2026-11-30')).body.data, sandbox.data.activity('igaming', '2026-11-30'));
    res = await admin('DELETE', '/igaming/activity?date=2026-11-30&customer_id=igc-000002&game_type=bingo&currency=EUR');
    assert.deepEqual(res.body, { deleted: true });
    res = await admin('DELETE', '/igaming/activity?date=2026-11-30&customer_id=igc-000002&currency=EUR');
    assert.equal(res.status, 400);
    assert.match(String(res.body.error_description), /game_type is required/);
  });

  it('POST /_sandbox/clock sets how far the partner\'s clock is from ours: changes without `at` are stamped by it, tokens keep the real clock', async () => {
    assert.deepEqual((await admin('GET', '/clock')).body, { now: '2026-12-01T10:00:00.000Z', offset_ms: 0 });
    let res = await admin('POST', '/clock', { offset_ms: -21 * 86_400_000 });
    assert.deepEqual(res.body, { now: '2026-11-10T10:00:00.000Z', offset_ms: -1_814_400_000 });
    res = await admin('POST', '/igaming/customers', { record: { customer_id: 'igc-000001', kyc_status_id: 'approved' } });
    assert.equal((res.body.data as Record<string, unknown>[])[0]?.last_modified_date, '2026-11-10T10:00:00.000Z');
    await admin('POST', '/clock', { offset_ms: 2 * 3_600_000 });
    const tx = sandbox.data.transactions('igaming')[0]!;
    res = await admin('POST', `/igaming/transactions/${String(tx.transaction_id)}/status`, { status: 'reversed' });
    assert.equal((res.body.data as Record<string, unknown>).updated_at, '2026-12-01T12:00:00.000Z');
    assert.ok(await token(sandbox), 'a token is issued and accepted by the real clock');
    res = await admin('POST', '/clock', { offset_ms: 'soon' });
    assert.equal(res.status, 400);
    assert.match(String(res.body.error_description), /offset_ms/);
  });

  it('bad bodies are 400; unknown admin paths 404', async () => {
    assert.equal((await admin('POST', '/igaming/customers', { record: { affiliate_id: 'x' } })).status, 400);
    assert.equal((await admin('POST', '/igaming/customers', [1, 2])).status, 400);
    assert.equal((await admin('GET', '/casino/customers')).status, 404);
    assert.equal((await admin('GET', '/igaming/nothing')).status, 404);
  });
});
