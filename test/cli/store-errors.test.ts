/**
 * A store failing under a command reads as one line: a PostgreSQL restart in the middle of an
 * `import` (the proxy in front of the server drops every connection and refuses new ones for a
 * moment) ends with exit 1 and one `partner-sync: ...` line on stderr, nothing on stdout (the
 * driver's pool notes and stacks stay out, so --json output stays clean); with DEBUG=1 the detail
 * is printed. PostgreSQL only: a SQLite store has no connection to lose.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Store } from '../../src/store/store.js';
import { runCli, type CliResult } from '../support/cli.js';
import { customer } from '../support/records.js';
import { STORES, type TestStore } from '../support/stores.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

const postgres = STORES.find((b) => b.name === 'postgres');
const RECORDS = 60_000;

const countCustomers = async (store: Store): Promise<number> => Number(((await store.knex('customers').count({ n: '*' })) as { n: number }[])[0]?.n ?? 0);

(postgres ? describe : describe.skip)('store errors on the command line (PostgreSQL restarted mid-import)', function () {
  this.timeout(120_000);
  let dir: string;
  let file: string;
  let s: TestStore;
  let proxy: TcpProxy;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'partner-sync-store-errors-'));
    file = join(dir, 'customers.ndjson');
    writeFileSync(file, Array.from({ length: RECORDS }, (_, i) => JSON.stringify(customer(`c${i}`))).join('\n') + '\n');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  beforeEach(async () => {
    s = await postgres!.create();
    proxy = await startTcpProxy({ host: new URL(s.url).hostname, port: Number(new URL(s.url).port || 5432) });
  });
  afterEach(async () => {
    await proxy.close();
    await s.drop();
  });

  /** Runs the import through the proxy and restarts "the server" once its first batch has committed. */
  async function importWithRestart(extraEnv: Record<string, string>): Promise<{ r: CliResult; loaded: number }> {
    const running = runCli(['import', 'acme', '--variant', 'igaming', '--entity', 'customers', '--json', file], { env: { STORE_URL: proxy.through(s.url), ...extraEnv } });
    let finished = false;
    void running.then(() => (finished = true));
    while (!finished && (await countCustomers(s.store)) === 0) await sleep(20);
    assert.equal(finished, false, 'the import ended before its first batch was seen: no restart happened mid-import');
    await proxy.restart(1_500);
    const r = await running;
    return { r, loaded: await countCustomers(s.store) };
  }

  it('exit 1, one line on stderr, nothing on stdout; the batches committed before it stay', async () => {
    const { r, loaded } = await importWithRestart({ DEBUG: '' });
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stdout, '', 'nothing on stdout (no driver notes before a --json document)');
    const lines = r.stderr.split('\n').filter((l) => l !== '');
    assert.equal(lines.length, 1, `one line, got:\n${r.stderr}`);
    assert.match(lines[0] as string, /^partner-sync: (connect ECONNREFUSED 127\.0\.0\.1:\d+|read ECONNRESET( while .*)?|Connection terminated unexpectedly|.*terminat.*)$/);
    assert.ok(loaded > 0 && loaded < RECORDS && loaded % 1000 === 0, `whole batches committed before the restart: ${loaded}`);
  });

  it('with DEBUG=1 the driver notes and the stack are printed too, on stderr', async () => {
    const { r } = await importWithRestart({ DEBUG: '1' });
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^partner-sync: /m);
    assert.match(r.stderr, /^\s+at /m, 'a stack');
    assert.ok(r.stderr.split('\n').filter((l) => l !== '').length > 1);
  });
});
