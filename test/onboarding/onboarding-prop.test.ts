/**
 * Onboarding a prop-trading partner whose names and units differ from the spec (the sandbox's
 * partner style for prop trading: traderId, epoch-millisecond business times AND change stamps,
 * cents, account sizes in thousands, numeric status and KYC codes, stage codes), from nothing to a
 * clean reconcile with discover, init, the edits of docs/onboarding.md, check, backfill and reconcile: over
 * REST, and over its replica on a real MariaDB and PostgreSQL. The REST partner's change stamps
 * are epoch milliseconds: init proposes `cursor_format: unix_millis` and incremental runs move
 * their cursor by them.
 */
import assert from 'node:assert/strict';
import { Decimal } from 'decimal.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSandboxData } from '../../src/sandbox/data.js';
import { partnerReplicaSql } from '../../src/sandbox/partner-replica.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { readState } from '../../src/store/sync-state.js';
import { openStore } from '../../src/store/store.js';
import { SANDBOX_SECRET } from '../support/sandbox.js';
import { SERVER_DATABASES, useDatabase } from '../sql/databases.js';
import { applyEdits, confirmTodos, cli, PARTNER_STYLE_EDITS, unaided } from './support.js';

interface Reconciled {
  ok: boolean;
  days: { entity: string; day: string; source: { count: number; sums: Record<string, string> }; source_sql?: { count: number; sums: Record<string, string> } }[];
}

describe('onboarding a partner-style prop-trading REST partner', function () {
  this.timeout(60_000);
  let sandbox: Sandbox;
  let dir: string;
  before(async () => {
    sandbox = await startSandbox({ port: 0, seed: 1, customers: 30, style: 'partner', clients: [{ client_id: 'sandbox-client', client_secret: SANDBOX_SECRET }] });
    dir = mkdtempSync(join(tmpdir(), 'partner-sync-onboarding-prop-'));
    process.env.PROPCO_SECRET = SANDBOX_SECRET;
  });
  after(async () => {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
    delete process.env.PROPCO_SECRET;
  });

  const source = () => [
    '--rest', sandbox.url, '--auth', 'oauth2', '--client-id', 'sandbox-client', '--auth-env', 'PROPCO_SECRET',
    '--customers', '/api/v1/prop-trading/customers', '--transactions', '/api/v1/prop-trading/transactions', '--activity', '/api/v1/prop-trading/activity',
  ];

  it('goes from nothing to a clean reconcile with discover, init, two edits, check, backfill; runs then move an epoch-millisecond cursor', async () => {
    const started = performance.now();
    const found = await cli(['discover', ...source(), '--json']);
    assert.equal(found.code, 0, found.err);
    const report = JSON.parse(found.out) as { entities: { entity: string; fields: { name: string; format?: string; distinct?: unknown[] }[] }[] };
    const customers = report.entities.find((e) => e.entity === 'customers');
    assert.equal(customers?.fields.find((f) => f.name === 'lastUpdate')?.format, 'epoch-millis');
    assert.deepEqual(customers?.fields.find((f) => f.name === 'stage')?.distinct?.slice().sort(), ['F', 'P1', 'P2', 'X']);

    const config = ['--config', dir, '--store', `sqlite:${join(dir, 'store.sqlite')}`];
    const init = await cli([...config, 'init', 'propco', '--variant', 'prop-trading', ...source()]);
    assert.equal(init.code, 0, init.err);
    assert.match(init.out, /the draft passes check/);
    const file = join(dir, 'partners', 'propco.yaml');
    const draft = readFileSync(file, 'utf8');
    assert.match(draft, /cursor_field: lastUpdate\n {6}cursor_format: unix_millis\n/);
    assert.match(draft, /cursor_field: updatedAt\n {6}cursor_format: unix_millis\n/);
    assert.match(draft, /customer_id: traderId/);
    assert.match(draft, /phase: \{ from: stage, map: \{ F: funded, P1: phase_1, P2: phase_2, X: failed \} \}/);
    assert.match(draft, /account_size: \{ from: accountSizeK, multiply: 1000 \}/);
    assert.match(draft, /lots_traded: \{ from: lotsX100, minor_units: 2 \}/);

    applyEdits(file, PARTNER_STYLE_EDITS);
    confirmTodos(file);
    const check = await cli([...config, 'check', '--partner', 'propco']);
    assert.equal(check.code, 0, check.out + check.err);
    const { from, to } = sandbox.data;
    const backfill = await cli([...config, 'backfill', 'propco', '--from', from, '--to', to]);
    assert.equal(backfill.code, 0, backfill.out + backfill.err);
    const clean = await cli([...config, 'reconcile', 'propco', '--from', from, '--to', to, '--json']);
    assert.equal(clean.code, 0, clean.out);
    const result = JSON.parse(clean.out) as Reconciled;
    const fees = sandbox.data.transactions('prop-trading').filter((t) => t.transaction_type === 'challenge_fee').reduce((n, t) => n + Math.round(Number(t.amount_currency) * 100), 0);
    const summed = result.days.filter((d) => d.entity === 'transactions').reduce((n, d) => n + Math.round(Number(d.source.sums.challenge_fees) * 100), 0);
    assert.equal(summed, fees, 'challenge fees summed in spec units (cents read as minor units)');
    const seconds = (performance.now() - started) / 1000;
    const right = unaided(draft, readFileSync(file, 'utf8'));
    console.log(`      prop REST partner: discover+init+2 edits+check+backfill+reconcile in ${seconds.toFixed(1)} s; init got ${right.right} of ${right.total} mapping lines right unaided`);
    assert.equal(right.total - right.right, 2);

    // Incremental runs: the window is asked in epoch milliseconds, the cursor kept as the instant it stands for.
    const runs = async () => JSON.parse((await cli([...config, 'run', 'propco', '--stream', 'customers', '--json'])).out) as { streams: { counts: { pulled: number } }[] };
    const first = await runs();
    assert.equal(first.streams[0]?.counts.pulled, sandbox.data.customers('prop-trading').length);
    const store = await openStore({ url: `sqlite:${join(dir, 'store.sqlite')}` });
    try {
      const state = (await readState(store.knex, 'propco', 'customers')) as { start: string; max_cursor: string };
      const latest = Math.max(...sandbox.data.customers('prop-trading').map((c) => Date.parse(String(c.last_modified_date))));
      assert.equal(state.max_cursor, new Date(latest).toISOString());
      assert.equal(Date.parse(state.start), latest);
    } finally {
      await store.close();
    }
    const second = await runs();
    const lookbackFrom = sandbox.data.customers('prop-trading').filter((c) => Date.parse(String(c.last_modified_date)) >= Math.max(...sandbox.data.customers('prop-trading').map((x) => Date.parse(String(x.last_modified_date)))) - 600_000);
    assert.equal(second.streams[0]?.counts.pulled, lookbackFrom.length, 'the second run reads only the lookback before the greatest stamp');
  });
});

for (const backend of SERVER_DATABASES) {
  describe(`onboarding a partner-style prop-trading replica on ${backend.client === 'mysql' ? 'MariaDB' : 'PostgreSQL'}`, function () {
    this.timeout(60_000);
    const db = useDatabase(backend);
    let dir: string;
    const data = createSandboxData({ seed: 1, customers: 30 });
    beforeEach(async () => {
      dir = mkdtempSync(join(tmpdir(), 'partner-sync-onboarding-prop-db-'));
      for (const statement of partnerReplicaSql(backend.client as 'mysql', data, 'prop-trading')) await db().exec(statement);
      process.env.PROPCO_REPLICA_URL = db().url;
    });
    afterEach(() => {
      rmSync(dir, { recursive: true, force: true });
      delete process.env.PROPCO_REPLICA_URL;
    });

    it('discover, init, two edits, check, backfill: reconcile is clean, every entity also counted and summed by SQL on the source', async () => {
      const started = performance.now();
      const found = await cli(['discover', '--db', backend.client, '--url-env', 'PROPCO_REPLICA_URL', '--json']);
      assert.equal(found.code, 0, found.err);
      const config = ['--config', dir, '--store', `sqlite:${join(dir, 'store.sqlite')}`];
      const init = await cli([...config, 'init', 'propco-replica', '--variant', 'prop-trading', '--db', backend.client, '--url-env', 'PROPCO_REPLICA_URL']);
      assert.equal(init.code, 0, init.err);
      const file = join(dir, 'partners', 'propco-replica.yaml');
      const draft = readFileSync(file, 'utf8');
      assert.match(draft, /table: traders\n/);
      assert.match(draft, /table: trader_payments\n/);
      assert.match(draft, /table: daily_trading\n/);
      applyEdits(file, PARTNER_STYLE_EDITS);
      confirmTodos(file);
      const check = await cli([...config, 'check', '--partner', 'propco-replica']);
      assert.equal(check.code, 0, check.out + check.err);
      const backfill = await cli([...config, 'backfill', 'propco-replica', '--from', data.from, '--to', data.to]);
      assert.equal(backfill.code, 0, backfill.out + backfill.err);
      const clean = await cli([...config, 'reconcile', 'propco-replica', '--from', data.from, '--to', data.to, '--json']);
      assert.equal(clean.code, 0, clean.out);
      const result = JSON.parse(clean.out) as Reconciled;
      const right = unaided(draft, readFileSync(file, 'utf8'));
      console.log(`      ${backend.client} prop replica: discover+init+2 edits+check+backfill+reconcile in ${((performance.now() - started) / 1000).toFixed(1)} s; init got ${right.right} of ${right.total} mapping lines right unaided`);
      assert.equal(right.total - right.right, 2);
      for (const entity of ['customers', 'transactions', 'activity']) {
        const days = result.days.filter((d) => d.entity === entity);
        assert.ok(days.length > 0 && days.every((d) => d.source_sql !== undefined), `${entity}: SQL aggregates on every day`);
        assert.ok(days.every((d) => JSON.stringify(d.source_sql) === JSON.stringify(d.source)), `${entity}: the SQL aggregates equal the rows read`);
      }
      const payouts = data.transactions('prop-trading').filter((t) => t.transaction_type === 'payout').reduce((n, t) => n + Math.round(Number(t.amount_currency) * 100), 0);
      assert.equal(result.days.filter((d) => d.entity === 'transactions').reduce((n, d) => n + Math.round(Number(d.source_sql?.sums.payouts) * 100), 0), payouts);
      // Account sizes kept in thousands (accountSizeK) are summed in units.
      const sizes = data.customers('prop-trading').filter((c) => c.signup_date !== undefined && String(c.signup_date).slice(0, 10) >= data.from).reduce((n, c) => n + Number(c.account_size ?? 0), 0);
      assert.equal(result.days.filter((d) => d.entity === 'customers').reduce((n, d) => n + Number(d.source_sql?.sums.account_sizes), 0), sizes);
      const pnl = data.activity('prop-trading').reduce((n, a) => n + Math.round(Number(a.pnl) * 100), 0);
      assert.equal(result.days.filter((d) => d.entity === 'activity').reduce((n, d) => n + Math.round(Number(d.source_sql?.sums.pnl) * 100), 0), pnl);

      // A payout whose change stamp is older than its own date (a back-dated correction): the
      // definition's cursor never reads it, so the rows read and the store agree without it; the
      // source's SQL counts it on its day, and its key is named.
      const q = backend.client === 'mysql' ? '`' : '"';
      const trader = String(data.customers('prop-trading')[0]?.customer_id).replace(/\D/g, '').replace(/^0+/, '');
      const createdAt = Date.parse(`${data.to}T12:00:00Z`);
      await db().exec(
        `INSERT INTO trader_payments (${['txId', 'traderId', 'type', 'amountCents', 'currencyCode', 'createdAt', 'statusCode', 'usdAmount', 'updatedAt'].map((c) => q + c + q).join(', ')}) ` +
          `VALUES (999001, ${trader}, 'PAYOUT', 12345, 'USD', ${createdAt}, 2, 123.45, '2026-01-01 00:00:00')`,
      );
      const diff = await cli([...config, 'reconcile', 'propco-replica', '--from', data.from, '--to', data.to, '--stream', 'transactions']);
      assert.equal(diff.code, 1, diff.out);
      const before = result.days.find((d) => d.entity === 'transactions' && d.day === data.to);
      assert.ok(before);
      const payoutsThen = new Decimal(before.source.sums.payouts ?? '0').plus('123.45').toFixed();
      assert.match(diff.out, new RegExp(`DIFF ${data.to} transactions: records ${before.source.count}/${before.source.count} \\(source/store\\);.*\n {5}source by SQL: records ${before.source.count + 1};.* payouts ${payoutsThen.replace('.', '\\.')},`));
      assert.match(diff.out, /missing in the store: 999001\n {5}at the source by SQL but not read through the definition: 999001/);
    });
  });
}
