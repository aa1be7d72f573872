/**
 * What every SQL source kind (db replica, warehouse) sets up the same way: its dialect, live
 * counters, the run's budget, one connection opened on first use (a definition refused before
 * then never connects), and each stream's plan worked out once.
 */
import type { StreamDefinition } from '../../src/config/definition.js';
import type { Logger, Redact } from '../../src/log.js';
import { SourceError, type SourceStats } from '../source.js';
import { openSqlConnection, type SqlConnection } from './connection.js';
import { budgetCheck } from './days.js';
import { SQL_DIALECTS, type SqlDialect } from './dialects.js';

export interface SqlSourceSettings {
  client: string;
  url: string;
  timezone: string;
  statement_timeout_ms: number;
  run_budget_ms: number;
}

export interface SqlSourceBaseDeps {
  clock: () => Date;
  logger: Logger;
  /** The definitions' redactor; every error passes through it (the URL is a secret). */
  redact: Redact;
  /** Epoch ms: the run's budget end (default clock() + source.run_budget_ms). */
  deadline?: number;
  /** Where a relative SQLite path is resolved from (default the working directory). */
  cwd?: string;
}

export interface SqlSourceBase<P> {
  dialect: SqlDialect;
  timezone: string;
  stats: SourceStats;
  budget: ReturnType<typeof budgetCheck>;
  connection(): SqlConnection;
  planFor(definition: StreamDefinition): P;
  close(): Promise<void>;
}

export function sqlSourceBase<P>(
  source: SqlSourceSettings,
  deps: SqlSourceBaseDeps,
  kind: string,
  plan: (definition: StreamDefinition, dialect: SqlDialect) => P,
): SqlSourceBase<P> {
  const dialect = SQL_DIALECTS[source.client as keyof typeof SQL_DIALECTS];
  if (dialect === undefined) throw new SourceError(`source.client: ${JSON.stringify(source.client)} is not a ${kind} client; allowed: ${Object.keys(SQL_DIALECTS).join(', ')}`);
  const timezone = source.timezone || 'UTC';
  const stats: SourceStats = { requests: 0, retries: 0, throttled: 0, waitedMs: 0 };
  const budget = budgetCheck(deps.clock, deps.deadline ?? deps.clock().getTime() + source.run_budget_ms);
  const plans = new WeakMap<object, P>();
  let db: SqlConnection | undefined;
  return {
    dialect,
    timezone,
    stats,
    budget,
    connection: () =>
      (db ??= openSqlConnection({ client: source.client as SqlDialect['client'], url: source.url, timezone, statementTimeoutMs: source.statement_timeout_ms, redact: deps.redact, logger: deps.logger, stats, cwd: deps.cwd })),
    planFor(definition) {
      let found = plans.get(definition);
      if (found === undefined) {
        found = plan(definition, dialect);
        plans.set(definition, found);
      }
      return found;
    },
    async close() {
      const open = db;
      db = undefined;
      await open?.close();
    },
  };
}
