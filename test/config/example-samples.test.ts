import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { DbStream, PartnerDefinition, WarehouseStream } from '../../src/config/definition.js';
import { loadDefinition } from '../../src/config/load-definitions.js';
import { createMapper } from '../../src/pipeline/map-record.js';
import { packageRoot } from '../../src/paths.js';
import { createSpecValidator } from '../../src/spec/validator.js';
import type { Entity } from '../../src/types.js';

/**
 * The SQLite stand-ins of the db and warehouse examples: samples/replica/prop-replica.sql and
 * samples/warehouse/casino-warehouse.sql hold exactly the tables, views and columns that
 * config/partners/replica-prop.yaml and warehouse-casino.yaml read, and exactly one deliberately
 * bad row per stream.
 */
const root = packageRoot();
const examples = [
  { partner: 'replica-prop', sql: 'samples/replica/prop-replica.sql', env: 'REPLICA_PROP_URL' },
  { partner: 'warehouse-casino', sql: 'samples/warehouse/casino-warehouse.sql', env: 'WAREHOUSE_CASINO_URL' },
] as const;

/** The rows a first run reads, read here with plain SQL: a cursor window over the last 30 days, days -3..-1 for daily streams. */
function firstRunRows(db: Database.Database, stream: DbStream | WarehouseStream): Record<string, unknown>[] {
  const day = (n: number): string => (db.prepare(`SELECT date('now', '-${n} days') AS d`).get() as { d: string }).d;
  const at = (n: number): string => (db.prepare(`SELECT datetime('now', '-${n} seconds') AS t`).get() as { t: string }).t;
  const quote = (name: string): string => name.split('.').map((part) => `"${part}"`).join('.');
  if ('view' in stream) {
    return db.prepare(`SELECT * FROM ${quote(stream.view)} WHERE ${quote(stream.date_column)} BETWEEN ? AND ?`).all(day(3), day(1)) as Record<string, unknown>[];
  }
  if (stream.incremental.mode === 'daily') {
    if (stream.query !== undefined) return db.prepare(stream.query).all({ date_from: day(3), date_to: day(1) }) as Record<string, unknown>[];
    return db.prepare(`SELECT * FROM ${quote(stream.table ?? '')} WHERE ${quote(stream.date_column ?? '')} BETWEEN ? AND ?`).all(day(3), day(1)) as Record<string, unknown>[];
  }
  // The bounds in the columns' own text form (SQLite compares DATETIME text as text); a query's
  // first page: :cursor just before :from, :id NULL (connectors/db/keyset.ts), all in one page.
  const window = { from: at(30 * 86_400), to: at(5) };
  if (stream.query !== undefined) return db.prepare(stream.query).all({ ...window, cursor: at(30 * 86_400 + 1), id: null, limit: 100_000 }) as Record<string, unknown>[];
  const cursor = quote(stream.cursor_column ?? '');
  return db.prepare(`SELECT * FROM ${quote(stream.table ?? '')} WHERE ${cursor} >= :from AND ${cursor} < :to`).all(window) as Record<string, unknown>[];
}

/** Zone-less DATETIME text as UTC ISO 8601, the digits kept: how a database source hands date-times on (source.timezone UTC). */
function asSourceHandsOn(row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(row).map(([key, value]) => [key, typeof value === 'string' && /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?$/.test(value) ? `${value.replace(' ', 'T')}Z` : value]),
  );
}

/** The source columns a mapping reads. */
function mappedColumns(stream: DbStream | WarehouseStream): string[] {
  return Object.values(stream.mapping.fields).flatMap((rule) => (typeof rule === 'string' ? [rule] : rule.const === undefined && rule.from !== undefined ? [rule.from] : []));
}

describe('example db and warehouse partners: their SQLite sample data', () => {
  const validator = createSpecValidator();

  for (const { partner, sql, env } of examples) {
    describe(partner, () => {
      let db: Database.Database;
      let definition: PartnerDefinition;
      before(async () => {
        db = new Database(':memory:');
        db.exec(readFileSync(join(root, sql), 'utf8'));
        const loaded = await loadDefinition(join(root, 'config', 'partners', `${partner}.yaml`), { [env]: 'sqlite::memory:' });
        assert.deepEqual(loaded.errors, []);
        assert.ok(loaded.definition);
        definition = loaded.definition;
      });
      after(() => db.close());

      it('applies twice (it drops what it creates)', () => {
        db.exec(readFileSync(join(root, sql), 'utf8'));
      });

      it('every table, view, query and column the definition names is there', () => {
        for (const [entity, s] of Object.entries(definition.streams) as [Entity, DbStream | WarehouseStream][]) {
          const rows = firstRunRows(db, s);
          assert.ok(rows.length >= 5, `${entity}: ${rows.length} rows`);
          const columns = Object.keys(rows[0] ?? {});
          const named = [...mappedColumns(s), ...('view' in s ? [s.date_column] : [s.cursor_column, s.tiebreak_column, s.date_column])].filter((c): c is string => c !== undefined);
          for (const column of named) assert.ok(columns.includes(column.slice(column.lastIndexOf('.') + 1)), `${entity}: column ${column} in ${columns.join(', ')}`);
        }
      });

      it('exactly one deliberately bad row per stream; the rest maps to valid spec records', () => {
        const bad: Record<string, string[]> = {};
        for (const [entity, s] of Object.entries(definition.streams) as [Entity, DbStream | WarehouseStream][]) {
          const map = createMapper(definition.variant, entity, s.mapping, definition.affiliates);
          for (const row of firstRunRows(db, s)) {
            const mapped = map(asSourceHandsOn(row));
            const violations = 'error' in mapped ? [mapped.error] : validator.validate(definition.variant, entity, mapped.record);
            for (const v of violations) (bad[entity] ??= []).push(`${v.field} ${v.rule}`);
          }
        }
        assert.deepEqual(
          bad,
          partner === 'replica-prop'
            ? { customers: ['phase mapping'], transactions: ['transaction_type mapping'], activity: ['lots_traded minimum'] }
            : { customers: ['email format'], transactions: ['transaction_type mapping'], activity: ['wins minimum'] },
        );
      });

      it('keeps microseconds in some date-times', () => {
        const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((t) => t.name);
        let found = 0;
        for (const table of tables) {
          for (const row of db.prepare(`SELECT * FROM "${table}"`).all() as Record<string, unknown>[]) {
            for (const value of Object.values(row)) if (typeof value === 'string' && /\d\d:\d\d:\d\d\.\d{6}$/.test(value)) found += 1;
          }
        }
        assert.ok(found >= 3, `${found} date-times with microseconds`);
      });
    });
  }
});
