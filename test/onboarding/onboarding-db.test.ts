/**
 * Onboarding a partner-style replica on a real MariaDB and PostgreSQL (src/sandbox/partner-replica.ts:
 * players, payments, daily_gaming with camelCase columns, BIGINT ids, epoch-millisecond times,
 * cents, numeric codes): discover finds the tables, their keysets, row counts and formats; init,
 * two edits, check, backfill and reconcile reconcile cleanly; a changed source row is then named
 * by day and key.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSandboxData } from '../../src/sandbox/data.js';
import { partnerReplicaSql } from '../../src/sandbox/partner-replica.js';
import { SERVER_DATABASES, useDatabase } from '../sql/databases.js';
import { applyEdits, confirmTodos, cli, PARTNER_STYLE_EDITS, unaided } from './support.js';

for (const backend of SERVER_DATABASES) {
  describe(`onboarding a partner-style replica on ${backend.client === 'mysql' ? 'MariaDB' : 'PostgreSQL'}`, function () {
    this.timeout(60_000);
    const db = useDatabase(backend);
    let dir: string;
    const data = createSandboxData({ seed: 1, customers: 30 });
    beforeEach(async () => {
      dir = mkdtempSync(join(tmpdir(), 'partner-sync-onboarding-db-'));
      for (const statement of partnerReplicaSql(backend.client as 'mysql', data)) await db().exec(statement);
      process.env.ACME_REPLICA_URL = db().url;
    });
    afterEach(() => {
      rmSync(dir, { recursive: true, force: true });
      delete process.env.ACME_REPLICA_URL;
    });

    it('discovers tables, keysets, row counts and value formats, then syncs and reconciles after two edits; a changed source row is a difference', async () => {
      const started = performance.now();
      const found = await cli(['discover', '--db', backend.client, '--url-env', 'ACME_REPLICA_URL', '--json']);
      assert.equal(found.code, 0, found.err);
      const report = JSON.parse(found.out) as { tables: { name: string; rows: number; keyset: { cursor_column: string; tiebreak_column: string }[]; date_columns: string[]; fields: { name: string; format?: string; distinct?: unknown[] }[] }[] };
      const table = (name: string) => report.tables.find((t) => t.name === name);
      assert.deepEqual(report.tables.map((t) => t.name).sort(), ['daily_gaming', 'payments', 'players']);
      assert.equal(table('payments')?.rows, data.transactions('igaming').length);
      assert.equal(table('daily_gaming')?.rows, data.activity('igaming').length);
      assert.deepEqual(table('players')?.keyset[0], { cursor_column: 'lastUpdate', tiebreak_column: 'playerId', index: 'players_lastUpdate', change_column: true, exact: true });
      assert.deepEqual(table('daily_gaming')?.date_columns, ['day']);
      assert.equal(table('payments')?.fields.find((f) => f.name === 'createdAt')?.format, 'epoch-millis');
      assert.deepEqual(table('payments')?.fields.find((f) => f.name === 'statusCode')?.distinct, [1, 2, 3, 4]);

      const config = ['--config', dir, '--store', `sqlite:${join(dir, 'store.sqlite')}`];
      const init = await cli([...config, 'init', 'acme-replica', '--variant', 'igaming', '--db', backend.client, '--url-env', 'ACME_REPLICA_URL']);
      assert.equal(init.code, 0, init.err);
      assert.match(init.out, /the draft passes check; 2 TODO\(s\) to review/);
      const file = join(dir, 'partners', 'acme-replica.yaml');
      const draft = readFileSync(file, 'utf8');
      assert.match(draft, /table: players\n {4}cursor_column: lastUpdate {4}# keyset index players_lastUpdate\n {4}tiebreak_column: playerId/);
      // A status map missing one of the source's codes: check reads every value of the column
      // (SELECT DISTINCT) and fails, naming the field, the column and the value the map lacks.
      const partial = readFileSync(file, 'utf8');
      applyEdits(file, [PARTNER_STYLE_EDITS[0] as [RegExp, string], [/^( +)status: statusCode$/m, '$1status: { from: statusCode, map: { "1": pending, "3": declined, "4": reversed } }']]);
      const wrongMap = await cli([...config, 'check', '--partner', 'acme-replica', '--json']);
      assert.equal(wrongMap.code, 1, wrongMap.out + wrongMap.err);
      const checked = JSON.parse(wrongMap.out) as { streams: { stream: string; ok: boolean; detail: string }[] };
      const txCheck = checked.streams.find((c) => c.stream === 'transactions');
      assert.equal(txCheck?.ok, false);
      assert.match(txCheck?.detail ?? '', /streams\.transactions\.table payments: mapping\.fields\.status\.map: statusCode holds 1 value\(s\) the map does not list \(every value of the table read by SELECT DISTINCT\): "2"; records holding them would be rejected/);
      assert.equal(checked.streams.find((c) => c.stream === 'customers')?.ok, false, 'customers: the draft\'s TODOs are left');
      writeFileSync(file, partial);
      applyEdits(file, PARTNER_STYLE_EDITS);
      confirmTodos(file);
      const check = await cli([...config, 'check', '--partner', 'acme-replica']);
      assert.equal(check.code, 0, check.out + check.err);
      const backfill = await cli([...config, 'backfill', 'acme-replica', '--from', data.from, '--to', data.to]);
      assert.equal(backfill.code, 0, backfill.out + backfill.err);
      const clean = await cli([...config, 'reconcile', 'acme-replica', '--from', data.from, '--to', data.to]);
      assert.equal(clean.code, 0, clean.out);
      assert.match(clean.out, /reconciled: acme-replica .* no difference/);
      // Activity days are also counted and summed by SQL on the source, through the mapping (cents → units).
      const json = JSON.parse((await cli([...config, 'reconcile', 'acme-replica', '--from', data.to, '--to', data.to, '--stream', 'activity', '--json'])).out) as { days: { source: { count: number; sums: Record<string, string> }; source_sql?: { count: number; sums: Record<string, string> } }[] };
      const last = json.days[0];
      assert.ok(last?.source_sql);
      assert.equal(last.source_sql.count, data.activity('igaming', data.to).length);
      assert.deepEqual(last.source_sql, last.source);
      const right = unaided(draft, readFileSync(file, 'utf8'));
      console.log(`      ${backend.client} replica: discover+init+2 edits+check+backfill+reconcile in ${((performance.now() - started) / 1000).toFixed(1)} s; init got ${right.right} of ${right.total} mapping lines right unaided`);

      const tx = data.transactions('igaming')[0];
      assert.ok(tx);
      const txId = String(tx.transaction_id).replace(/\D/g, '').replace(/^0+/, '');
      const q = backend.client === 'mysql' ? '`' : '"';
      await db().exec(`UPDATE payments SET ${q}amountCents${q} = ${q}amountCents${q} + 1 WHERE ${q}txId${q} = ${txId}`);
      const diff = await cli([...config, 'reconcile', 'acme-replica', '--from', data.from, '--to', data.to, '--stream', 'transactions']);
      assert.equal(diff.code, 1, diff.out);
      assert.match(diff.out, new RegExp(`DIFF ${String(tx.transaction_date).slice(0, 10)} transactions: [\\s\\S]*differs ${txId}: amount_currency source `));
    });
  });
}
