/**
 * The store backends every integration test runs against: a fresh SQLite file, and a fresh
 * schema in the machine's PostgreSQL. Each test owns its store and drops it afterwards.
 * TEST_STORES=sqlite (or postgres) narrows the list; TEST_PG_URL points at another server.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openStore, type Store } from '../../src/store/store.js';
import { type Clock } from '../../src/kernel/clock.js';

export const PG_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestStore {
  url: string;
  store: Store;
  /** Closes the store and removes its file or schema. */
  drop(): Promise<void>;
}

export interface StoreBackend {
  name: 'sqlite' | 'postgres';
  create(clock?: Clock): Promise<TestStore>;
}

let counter = 0;

export async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

const sqlite: StoreBackend = {
  name: 'sqlite',
  async create(clock) {
    const dir = mkdtempSync(join(tmpdir(), 'partner-sync-test-'));
    const url = `sqlite:${join(dir, 'store.sqlite')}`;
    const store = await openStore({ url, clock });
    return { url, store, drop: async () => { await store.close(); rmSync(dir, { recursive: true, force: true }); } };
  },
};

const postgres: StoreBackend = {
  name: 'postgres',
  async create(clock) {
    const schema = `ps_test_${process.pid}_${++counter}_${Date.now() % 100000}`;
    await adminQuery(`CREATE SCHEMA ${schema}`);
    const url = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    const store = await openStore({ url, clock });
    return { url, store, drop: async () => { await store.close(); await adminQuery(`DROP SCHEMA ${schema} CASCADE`); } };
  },
};

const wanted = (process.env.TEST_STORES ?? 'sqlite,postgres').split(',').map((s) => s.trim());
export const STORES: StoreBackend[] = [sqlite, postgres].filter((b) => wanted.includes(b.name));

/** A clock that stands still unless moved: bookkeeping times become predictable. */
export function fixedClock(iso = '2026-11-22T10:00:00.000Z'): Clock & { set(iso: string): void } {
  let now = new Date(iso);
  const clock = (() => new Date(now)) as Clock & { set(iso: string): void };
  clock.set = (next: string) => { now = new Date(next); };
  return clock;
}
