/**
 * Migrations take turns across processes: three commands started at once on a fresh store all
 * succeed and the data is loaded once (PostgreSQL: an advisory lock around the migration run;
 * SQLite: the file's write lock). A store that cannot be opened is exit 1, never 2 (bad usage).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../src/store/store.js';
import { runCli } from '../support/cli.js';
import { customer } from '../support/records.js';
import { adminQuery, PG_URL, STORES } from '../support/stores.js';

describe('migrations of processes started at once on a fresh store', function () {
  this.timeout(120_000);
  let dir: string;
  let file: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'partner-sync-migration-lock-'));
    file = join(dir, 'customers.ndjson');
    writeFileSync(file, Array.from({ length: 50 }, (_, i) => JSON.stringify(customer(`c${i}`))).join('\n') + '\n');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const fresh: Record<string, () => Promise<{ url: string; drop: () => Promise<void> }>> = {
    postgres: async () => {
      const schema = `ps_mlock_${process.pid}_${Date.now() % 100000}`;
      await adminQuery(`CREATE SCHEMA ${schema}`);
      return { url: `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`, drop: () => adminQuery(`DROP SCHEMA ${schema} CASCADE`) };
    },
    sqlite: async () => ({ url: `sqlite:${join(dir, `fresh-${Date.now()}.sqlite`)}`, drop: async () => {} }),
  };

  for (const backend of STORES) {
    it(`${backend.name}: three commands at once all exit 0, the migrations ran once, the records are stored once`, async () => {
      const { url, drop } = await fresh[backend.name]!();
      try {
        // On SQLite the three run `migrate` at once and import one after the other: concurrent
        // imports into one SQLite file are a separate matter from migrations taking turns.
        const importing = ['import', 'acme', '--variant', 'igaming', '--entity', 'customers', '--json', file];
        const first = backend.name === 'postgres' ? importing : ['migrate'];
        const runs = await Promise.all([1, 2, 3].map(() => runCli(first, { env: { STORE_URL: url } })));
        if (backend.name === 'sqlite') for (let i = 0; i < 3; i++) runs.push(await runCli(importing, { env: { STORE_URL: url } }));
        for (const r of runs) assert.equal(r.code, 0, r.stderr);
        const store = await openStore({ url, migrate: false });
        try {
          const applied = await store.appliedMigrations();
          assert.equal(new Set(applied).size, applied.length, 'a migration applied twice');
          assert.deepEqual(await store.migrate(), [], 'migrations left pending');
          const [row] = (await store.knex('customers').count({ n: '*' })) as { n: number | string }[];
          assert.equal(Number(row?.n), 50);
          const [succeeded] = (await store.knex('runs').where({ status: 'succeeded' }).count({ n: '*' })) as { n: number | string }[];
          assert.equal(Number(succeeded?.n), 3);
        } finally {
          await store.close();
        }
      } finally {
        await drop();
      }
    });
  }

  it('a store that cannot be opened is exit 1 (a runtime failure), a store URL that cannot be read exit 2', async () => {
    const unreachable = await runCli(['status'], { env: { STORE_URL: 'postgres://postgres@127.0.0.1:1/none' } });
    assert.equal(unreachable.code, 1, unreachable.stderr);
    assert.match(unreachable.stderr, /^partner-sync: cannot open store/);
    const unreadable = await runCli(['status'], { env: { STORE_URL: 'nosuch://x' } });
    assert.equal(unreadable.code, 2, unreadable.stderr);
  });
});
