/**
 * Database errors as SourceErrors: what was being done, then the driver's message, scrubbed. The
 * connection URL is a secret (it may carry a password): the definitions' redactor removes it and
 * every other resolved secret, and a password in any URL-shaped text is masked as well. A
 * statement cancelled by the source's statement timeout says so, with the setting to change.
 */
import type { Redact } from '../../src/log.js';
import { SourceError } from '../source.js';

const URL_PASSWORD = /([a-z][a-z0-9+.-]*:\/\/[^:/?#@\s]*:)[^@/?#\s]*@/gi;

/** A URL or any text fit for messages: passwords in URLs masked, then the redactor applied. */
export function scrub(text: string, redact: Redact): string {
  return redact(text.replace(URL_PASSWORD, '$1***@'));
}

interface DriverError {
  message?: unknown;
  code?: unknown;
  errno?: unknown;
}

/** MariaDB 1969 (max_statement_time), MySQL 3024 (max_execution_time), PostgreSQL 57014 by statement_timeout. */
export function isStatementTimeout(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { errno, code, message } = error as DriverError;
  if (errno === 1969 || errno === 3024) return true;
  return code === '57014' && typeof message === 'string' && message.includes('statement timeout');
}

export function sqlError(what: string, error: unknown, redact: Redact, timeoutMs?: number): SourceError {
  if (error instanceof SourceError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (isStatementTimeout(error)) {
    const limit = timeoutMs === undefined ? '' : ` of ${timeoutMs} ms`;
    return new SourceError(scrub(`${what}: cancelled by the statement timeout${limit} (source.statement_timeout_ms): ${message}`, redact), { cause: error });
  }
  return new SourceError(scrub(`${what}: ${message}`, redact), { cause: error });
}
