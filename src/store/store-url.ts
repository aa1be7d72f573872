import { dirname, resolve } from 'node:path';
import type { StoreKind } from './dialects.js';

export const DEFAULT_SQLITE_FILE = './data/partner-sync.sqlite';

export interface StoreLocation {
  kind: StoreKind;
  /** For postgres the connection string; for sqlite an absolute file path (or ':memory:'). */
  target: string;
}

/**
 * Reads a store URL: `postgres://...` / `postgresql://...`, `sqlite:PATH` / `sqlite://PATH`,
 * or a bare file path (SQLite). Empty means the embedded default under ./data/.
 */
export function parseStoreUrl(url: string | undefined, cwd = process.cwd()): StoreLocation {
  const value = (url ?? '').trim();
  if (value === '') return { kind: 'sqlite', target: resolve(cwd, DEFAULT_SQLITE_FILE) };
  if (/^postgres(ql)?:\/\//i.test(value)) return { kind: 'postgres', target: value };
  const sqlite = /^sqlite:(\/\/)?(.*)$/i.exec(value);
  const path = sqlite ? (sqlite[2] ?? '') : value;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value) && !sqlite) {
    throw new Error(`unsupported store URL scheme in ${redactUrl(value)}: use postgres://... or sqlite:PATH`);
  }
  if (path === '') throw new Error('store URL sqlite: needs a file path, e.g. sqlite:./data/partner-sync.sqlite');
  return { kind: 'sqlite', target: path === ':memory:' ? path : resolve(cwd, path) };
}

/** A URL fit for logs and messages: the password is replaced by ***. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/?#@]*:)[^@/?#]*@/i, '$1***@');
}

export function describeStore(location: StoreLocation): string {
  return location.kind === 'postgres' ? redactUrl(location.target) : `sqlite:${location.target}`;
}

export function sqliteDirectory(location: StoreLocation): string | undefined {
  return location.kind === 'sqlite' && location.target !== ':memory:' ? dirname(location.target) : undefined;
}
