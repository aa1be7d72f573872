/**
 * Reconcile's SQL aggregates on a real MariaDB and PostgreSQL, through the mapping: a customer's
 * day is the UTC day of a DATETIME written in the source's zone (Europe/Malta; on MariaDB without
 * the server's zone tables: the local hours are turned to UTC days by us), transactions are summed per spec type from the
 * partner's codes, amounts kept in thousands come out in units, and a stream read by a query is
 * named as not aggregated.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PartnerDefinition } from '../../src/config/definition.js';
import { loadDefinition } from '../../src/config/load-definitions.js';
import { sourceAggregates, sourceKeys } from '../../src/onboarding/source-aggregates.js';
import { SERVER_DATABASES, useDatabase } from '../sql/databases.js';
import { captureLogger } from '../worker/support/log-capture.js';

for (const backend of SERVER_DATABASES) {
  const mysql = backend.client === 'mysql';
  const zone = 'Europe/Malta';
  describe(`reconcile's SQL aggregates on ${mysql ? 'MariaDB' : 'PostgreSQL'} (source zone ${zone})`, function () {
    this.timeout(30_000);
    const db = useDatabase(backend);
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'partner-sync-aggregates-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    async function definition(transactions: string): Promise<PartnerDefinition> {
      const file = join(dir, 'agg.yaml');
      writeFileSync(
        file,
        [
          'partner: agg', 'variant: igaming', 'source:', '  type: db', `  client: ${backend.client}`, '  url: ${AGG_URL}', `  timezone: ${zone}`, 'streams:',
          '  customers:', '    table: members', '    cursor_column: changed', '    tiebreak_column: member_id', '    mapping:', '      passthrough: false', '      fields:',
          '        customer_id: member_id', '        signup_date: joined', '        affiliate_id: aff', '        last_modified_date: changed',
          '  transactions:', transactions, '    cursor_column: changed', '    tiebreak_column: move_id', '    mapping:', '      passthrough: false', '      fields:',
          '        transaction_id: move_id', '        customer_id: member_id', '        transaction_type: { from: kind, map: { D: deposit, W: withdrawal, B: bonus } }',
          '        amount_currency: { from: amount_k, multiply: 1000 }', '        currency: ccy', '        transaction_date: made', '        status: state', '',
        ].join('\n'),
      );
      const loaded = await loadDefinition(file, { AGG_URL: db().url });
      assert.deepEqual(loaded.errors, []);
      return loaded.definition as PartnerDefinition;
    }

    it('counts customers per UTC signup day and sums transactions per spec type in spec units', async () => {
      const stamp = mysql ? 'DATETIME(6)' : 'timestamp(6)';
      await db().exec(`CREATE TABLE members (member_id BIGINT PRIMARY KEY, joined ${stamp} NOT NULL, aff VARCHAR(20) NOT NULL, changed ${stamp} NOT NULL)`);
      await db().exec(`CREATE TABLE moves (move_id BIGINT PRIMARY KEY, member_id BIGINT NOT NULL, kind VARCHAR(2) NOT NULL, amount_k DECIMAL(12,4) NOT NULL, ccy VARCHAR(3) NOT NULL, made ${stamp} NOT NULL, state VARCHAR(10) NOT NULL, changed ${stamp} NOT NULL)`);
      // Malta is UTC+2 in early October: 01:30 local is the day before in UTC.
      const early = '2026-10-02 01:30:00';
      await db().exec(`INSERT INTO members VALUES (1, '${early}', 'a', '2026-10-05 00:00:00'), (2, '2026-10-02 12:00:00', 'a', '2026-10-05 00:00:00'), (3, '2026-10-03 12:00:00', 'a', '2026-10-05 00:00:00')`);
      await db().exec(
        `INSERT INTO moves VALUES (10, 1, 'D', 0.1, 'EUR', '${early}', 'approved', '2026-10-05 00:00:00'), (11, 1, 'D', 0.0505, 'EUR', '2026-10-02 12:00:00', 'approved', '2026-10-05 00:00:00'),` +
          ` (12, 2, 'W', 1.25, 'EUR', '2026-10-02 13:00:00', 'approved', '2026-10-05 00:00:00'), (13, 2, 'B', 0.01, 'EUR', '2026-10-02 14:00:00', 'approved', '2026-10-05 00:00:00')`,
      );
      const def = await definition('    table: moves');
      const { logger } = captureLogger();
      const deps = { redact: (t: string) => t, logger };
      const customers = await sourceAggregates(deps, def, 'customers', def.streams.customers as never, '2026-10-01', '2026-10-02');
      assert.ok(customers && 'days' in customers);
      assert.deepEqual(Object.fromEntries(customers.days), { '2026-10-01': { count: 1, sums: {} }, '2026-10-02': { count: 1, sums: {} } });
      const tx = await sourceAggregates(deps, def, 'transactions', def.streams.transactions as never, '2026-10-01', '2026-10-02');
      assert.ok(tx && 'days' in tx);
      assert.deepEqual(Object.fromEntries(tx.days), {
        '2026-10-01': { count: 1, sums: { deposits: '100', withdrawals: '0', bonuses: '0' } },
        '2026-10-02': { count: 3, sums: { deposits: '50.5', withdrawals: '1250', bonuses: '10' } },
      });
      const keys = await sourceKeys(deps, def, 'customers', def.streams.customers as never, ['2026-10-01', '2026-10-02'], (r) => String(r.customer_id));
      assert.deepEqual(Object.fromEntries([...(keys ?? new Map<string, Set<string>>())].map(([d, k]) => [d, [...k]])), { '2026-10-01': ['1'], '2026-10-02': ['2'] });
    });

    it('names a stream read by a query as not aggregated', async () => {
      const def = await definition(['    query: |', '      SELECT * FROM moves WHERE changed >= :from AND changed < :to AND (changed > :cursor OR (changed = :cursor AND move_id > :id)) ORDER BY changed, move_id LIMIT :limit'].join('\n'));
      const { logger } = captureLogger();
      const found = await sourceAggregates({ redact: (t) => t, logger }, def, 'transactions', def.streams.transactions as never, '2026-10-01', '2026-10-02');
      assert.deepEqual(found, { skipped: 'the stream is read by a query: compared on the rows it reads only' });
    });
  });
}
