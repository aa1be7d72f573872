/**
 * The two partners a new user met with `init`: a prop firm's MariaDB replica with terse names
 * (traders, fees, daily_pnl), whose structure answers what the names do not (the primary key, a
 * column holding only traders' ids, aff, sym, ccy, a fee table), each guess with its evidence in
 * the draft; and a REST partner on the spec's paths whose activity is empty for the last days (or
 * altogether): discover looks further back, and the draft always loads and passes `check`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { SERVER_DATABASES, useDatabase } from '../sql/databases.js';
import { dayOf } from './fixtures/data.js';
import type { RestFixtureSource, SqlFixtureSource } from './fixtures/fixture.js';
import { specQuiet } from './fixtures/rest-fixtures.js';
import { propTerse } from './fixtures/sql-fixtures.js';
import { cli } from './support.js';

const mariadb = SERVER_DATABASES.filter((b) => b.client === 'mysql');

for (const backend of mariadb) {
  describe('init on a prop firm replica with terse names (MariaDB): guesses from structure, with their evidence', function () {
    this.timeout(60_000);
    const db = useDatabase(backend);
    const fixture = propTerse();
    let dir: string;
    beforeEach(async () => {
      dir = mkdtempSync(join(tmpdir(), 'partner-sync-structure-'));
      for (const statement of (fixture.source as SqlFixtureSource).sql()) await db().exec(statement);
      process.env.PROPFIRM_REPLICA_URL = db().url;
    });
    afterEach(() => {
      rmSync(dir, { recursive: true, force: true });
      delete process.env.PROPFIRM_REPLICA_URL;
    });

    it('discover reports primary keys and the columns whose sampled values all lie in traders.id', async () => {
      const found = await cli(['discover', '--db', 'mysql', '--url-env', 'PROPFIRM_REPLICA_URL', '--json']);
      assert.equal(found.code, 0, found.err);
      const tables = (JSON.parse(found.out) as { tables: { name: string; primary_key: string[]; references: unknown[]; fields: { name: string; unique: boolean }[] }[] }).tables;
      const table = (name: string) => tables.find((t) => t.name === name);
      assert.deepEqual(table('traders')?.primary_key, ['id']);
      assert.deepEqual(table('daily_pnl')?.primary_key, ['day', 'trader', 'sym']);
      const traders = new Set(fixture.data.activity.map((a) => a.customer)).size;
      assert.deepEqual(table('daily_pnl')?.references, [{ column: 'trader', table: 'traders', key: 'id', how: 'contained', values: traders, found: traders }]);
      assert.deepEqual(table('fees')?.references, [{ column: 'trader', table: 'traders', key: 'id', how: 'contained', values: fixture.data.customers.length, found: fixture.data.customers.length }]);
      assert.equal(table('fees')?.fields.find((f) => f.name === 'id')?.unique, true);
      assert.equal(table('fees')?.fields.find((f) => f.name === 'trader')?.unique, false);
      const text = await cli(['discover', '--db', 'mysql', '--url-env', 'PROPFIRM_REPLICA_URL']);
      assert.match(text.out, new RegExp(`reference: trader → traders\\.id \\(all ${traders} distinct values of the sample found in traders\\.id\\)`));
    });

    it('init fills every field the structure answers, says why in a comment, keeps a TODO only where a guess could be wrong, and passes check', async () => {
      const config = ['--config', dir, '--store', `sqlite:${join(dir, 'store.sqlite')}`];
      const init = await cli([...config, 'init', 'propfirm', '--variant', 'prop-trading', '--db', 'mysql', '--url-env', 'PROPFIRM_REPLICA_URL', '--json']);
      assert.equal(init.code, 0, init.err);
      const report = JSON.parse(init.out) as { file: string; todos: string[]; definition_errors: string[]; check: { ok: boolean; detail: string }[] };
      assert.deepEqual(report.definition_errors, []);
      assert.ok(report.check.every((c) => c.ok), JSON.stringify(report.check));
      const draft = readFileSync(report.file, 'utf8');
      const traders = new Set(fixture.data.activity.map((a) => a.customer)).size;
      assert.match(draft, /# customer_id ← id: the primary key of traders\n {8}customer_id: id\n/);
      assert.match(draft, /# affiliate_id ← aff: aff is the usual short form of affiliate\n {8}affiliate_id: aff\n/);
      assert.match(draft, /phase: \{ from: stage, map: \{ (F: funded, )?P1: phase_1, P2: phase_2(, X: failed)? \} \}/);
      assert.match(draft, /account_size: \{ from: size_k, multiply: 1000 \}/);
      assert.match(draft, /table: fees\n/);
      assert.match(draft, /# transaction_type: fees is a fee or purchase table of a prop-trading partner and has no type field: its rows are challenge fees\n {8}# TODO: transactions\.transaction_type: every row of fees taken as a challenge fee; map its type field if it also holds reset fees or refunds\n {8}transaction_type: \{ const: challenge_fee \}\n/);
      assert.match(draft, /status: \{ from: status, map: \{ failed: declined, paid: approved, pending: pending \} \}/);
      assert.match(draft, new RegExp(`# customer_id ← trader: trader → traders\\.id \\(all ${traders} distinct values of the sample found in traders\\.id\\)\\n {8}customer_id: trader\\n`));
      assert.match(draft, /# instrument ← sym: sym is the usual short form of symbol \(the instrument\)\n {8}instrument: sym\n/);
      assert.match(draft, /# currency ← ccy: ccy is the usual short form of currency\n {8}currency: ccy\n/);
      assert.match(draft, /pnl: \{ from: pnl_cents, minor_units: 2 \}/);
      // The TODOs left are the guesses that could be wrong, none about which field is which key, affiliate or instrument.
      assert.deepEqual(report.todos.map((t) => t.replace(/:.*/, '')), ['source.timezone', 'transactions.transaction_type', 'transactions']);
      assert.match(report.todos[0] ?? '', /^source\.timezone: UTC assumed, not proven: /);
      assert.match(report.todos[2] ?? '', /created is not named like a change column/);
      const def = parse(draft) as { streams: Record<string, { mapping: { fields: Record<string, unknown> } }> };
      assert.deepEqual(Object.keys(def.streams.activity?.mapping.fields ?? {}), ['date', 'customer_id', 'instrument', 'lots_traded', 'pnl', 'currency']);
    });
  });
}

describe('init on a REST partner on the spec\'s paths whose activity is quiet', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'partner-sync-quiet-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  async function withPartner<T>(activity: boolean, work: (flags: string[]) => Promise<T>): Promise<T> {
    const source = specQuiet({ activity }).source as RestFixtureSource;
    const partner = await source.start();
    process.env.QUIET_SECRET = source.secret;
    try {
      return await work(source.flags(partner.url, 'QUIET_SECRET'));
    } finally {
      delete process.env.QUIET_SECRET;
      await partner.close();
    }
  }
  const daysAgo = (n: number) => dayOf(Date.now() - n * 86_400_000);

  it('discover looks back past the 9 empty days to the latest day with activity; --sample-date reads the day asked', async () => {
    await withPartner(true, async (flags) => {
      const found = await cli(['discover', ...flags, '--json']);
      assert.equal(found.code, 0, found.err);
      const activity = (JSON.parse(found.out) as { entities: { entity: string; records: number; notes: string[] }[] }).entities.find((e) => e.entity === 'activity');
      assert.deepEqual(activity?.notes, [`activity read for date=${daysAgo(10)}`]);
      assert.ok((activity?.records ?? 0) > 0);
      const asked = await cli(['discover', ...flags, '--sample-date', daysAgo(5), '--json']);
      const none = (JSON.parse(asked.out) as { entities: { entity: string; records: number; notes: string[] }[] }).entities.find((e) => e.entity === 'activity');
      assert.deepEqual([none?.records, none?.notes], [0, [`activity read for date=${daysAgo(5)}`]]);
      const bad = await cli(['discover', ...flags, '--sample-date', '2026-13-01']);
      assert.equal(bad.code, 2);
      assert.match(bad.err, /--sample-date must be a date YYYY-MM-DD, got "2026-13-01"/);
    });
  });

  it('the draft maps activity from the day found and passes check', async () => {
    await withPartner(true, async (flags) => {
      const init = await cli(['--config', dir, '--store', `sqlite:${join(dir, 's.sqlite')}`, 'init', 'quiet', '--variant', 'igaming', ...flags]);
      assert.equal(init.code, 0, init.err);
      assert.match(init.out, /the draft passes check/);
      const def = parse(readFileSync(join(dir, 'partners', 'quiet.yaml'), 'utf8')) as { streams: { activity: { mapping: { fields: Record<string, unknown> } } } };
      assert.deepEqual(def.streams.activity.mapping.fields, { date: 'date', customer_id: 'customer_id', game_type: 'game_type', currency: 'currency', bets_count: 'bets_count', total_bets: 'total_bets', wins: 'wins', ggr: 'ggr' });
    });
  });

  it('an endpoint with no activity in 90 days gets the spec\'s field names with a TODO, and the draft passes check', async () => {
    await withPartner(false, async (flags) => {
      const init = await cli(['--config', dir, '--store', `sqlite:${join(dir, 's.sqlite')}`, 'init', 'quiet', '--variant', 'igaming', ...flags, '--json']);
      assert.equal(init.code, 0, init.err);
      const report = JSON.parse(init.out) as { todos: string[]; definition_errors: string[]; check: { stream: string; ok: boolean; detail: string }[] };
      assert.deepEqual(report.definition_errors, []);
      assert.deepEqual(report.check.map((c) => [c.stream, c.ok]), [['customers', true], ['transactions', true], ['activity', true]]);
      assert.ok(report.todos.includes(`activity: /api/v1/igaming/activity answered no records (no activity on any day from ${daysAgo(1)} back to ${daysAgo(90)}); the spec's field names are written: check them against the partner's records`), report.todos.join('\n'));
      const def = parse(readFileSync(join(dir, 'partners', 'quiet.yaml'), 'utf8')) as { streams: { activity: { mapping: { fields: Record<string, unknown> }; incremental: Record<string, unknown> } } };
      assert.deepEqual(def.streams.activity.mapping.fields, { date: 'date', customer_id: 'customer_id', game_type: 'game_type', currency: 'currency' });
      assert.equal(def.streams.activity.incremental.date_param, 'date');
    });
  });
});
