/**
 * A failed store statement in one line a user can act on. knex puts the whole statement before the
 * driver's message (by default with its values bound in: names, e-mails, amounts), so a full disk
 * under an import read as a 600-character INSERT. openStore has knex leave the values out
 * (`compileSqlOnError: false`) and rewrites each failed query's message here to what failed and
 * where: `store is full: database or disk is full (SQLITE_FULL) while writing transactions`. The
 * statement, with placeholders only, stays on the error as `statement` (printed with DEBUG=1); no
 * value of a record ever enters the message, the runs table or a log line.
 */
import type { Knex } from 'knex';

/** Driver codes of a store out of space: SQLite's, PostgreSQL's `disk_full` SQLSTATE. */
const FULL_CODES = new Set(['SQLITE_FULL', '53100']);

/** What a statement was doing, from its first words: `writing transactions`, `reading customers`, `committing a transaction`. */
export function statementActivity(sql: string): string {
  const text = sql.trim();
  const table = (pattern: RegExp): string | undefined => pattern.exec(text)?.[1]?.replace(/["`]/g, '');
  if (/^(commit|release)\b/i.test(text)) return 'committing a transaction';
  if (/^(begin|savepoint)\b/i.test(text)) return 'starting a transaction';
  if (/^rollback\b/i.test(text)) return 'rolling back a transaction';
  const written = table(/^(?:with\b[\s\S]*?\)\s*)?(?:insert\s+(?:or\s+\w+\s+)?into|update|delete\s+from|copy)\s+([`"\w.]+)/i);
  if (written !== undefined) return `writing ${written}`;
  if (/^(create|alter|drop)\b/i.test(text)) return 'changing the schema';
  const read = table(/\bfrom\s+([`"\w.]+)/i);
  if (read !== undefined && /^(select|with)\b/i.test(text)) return `reading ${read}`;
  return 'running a statement';
}

/** The one-line message of a failed statement: the driver's words, its code, what the statement did; never the statement. */
export function describeStatementError(driverMessage: string, code: string | undefined, sql: string): string {
  const full = code !== undefined && FULL_CODES.has(code);
  return `${full ? 'store is full: ' : ''}${driverMessage}${code !== undefined && !driverMessage.includes(code) ? ` (${code})` : ''} while ${statementActivity(sql)}`;
}

/** An error thrown by a failed store statement, after `scrubStatementErrors`. */
export interface StatementError extends Error {
  /** The statement with placeholders, no values (for DEBUG output). */
  statement?: string;
  code?: string;
}

/**
 * Rewrites every failed query's message on this knex (its `query-error` event comes before the
 * error is thrown to the caller). Needs `compileSqlOnError: false`, so the prefix knex adds is
 * the statement without its values.
 */
export function scrubStatementErrors(knex: Knex): void {
  knex.on('query-error', (error: StatementError, query: { sql?: string }) => {
    const sql = query.sql ?? '';
    const prefix = `${sql} - `;
    const driverMessage = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
    reword(error, driverMessage, sql);
  });
}

/**
 * The same words for an error of a statement run on the driver's connection itself, past knex
 * (SQLite's prepared upserts, PostgreSQL's COPY: ./upsert.ts): a driver error (one with a code)
 * not already reworded is; any other error is returned as it is.
 */
export function rewordDriverError(error: unknown, sql: string): unknown {
  if (error instanceof Error && (error as StatementError).statement === undefined && typeof (error as StatementError).code === 'string') reword(error, error.message, sql);
  return error;
}

function reword(error: StatementError, driverMessage: string, sql: string): void {
  const code = typeof error.code === 'string' ? error.code : undefined;
  error.statement = sql;
  error.message = describeStatementError(driverMessage, code, sql);
}
