/**
 * SIGKILL of `partner-sync serve` during a bulk POST (PostgreSQL store): afterwards the request
 * either committed whole (and, if it was answered, it was) or left nothing; never half. Several
 * kill delays, so the kill falls before, during and after the load transaction.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createClient } from '../../src/access/api-clients.js';
import { packageRoot } from '../../src/paths.js';
import { customer } from '../support/records.js';
import { STORES, type TestStore } from '../support/stores.js';

const postgres = STORES.find((s) => s.name === 'postgres');

function startServe(storeUrl: string): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(packageRoot(), 'bin', 'partner-sync.js'), '--config', join(packageRoot(), 'no-such-config'), 'serve', '--port', '0'], {
      env: { ...process.env, STORE_URL: storeUrl, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) resolve({ child, url: m[1] as string });
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
}

(postgres ? describe : describe.skip)('SIGKILL of serve during a bulk POST (postgres)', function () {
  this.timeout(60_000);
  let t: TestStore;
  const FRACTIONS = [0.6, 0.9];
  let servers: Promise<{ child: ChildProcess; url: string }>[] = [];
  before(async () => {
    t = await postgres!.create();
    // Started side by side: a start costs more than a test.
    servers = FRACTIONS.map(() => startServe(t.url));
    for (const s of servers) s.catch(() => undefined);
  });
  after(async () => {
    for (const s of servers) {
      const { child } = await s.catch(() => ({ child: undefined }));
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    await t.drop();
  });

  const rowsOf = async (prefix: string): Promise<number> =>
    Number(((await t.store.knex('customers').where('partner_id', 'killed').andWhere('customer_id', 'like', `${prefix}%`).count({ n: '*' })) as { n: number }[])[0]?.n);

  FRACTIONS.forEach((fraction, n) => {
    it(`killed at ${fraction * 100}% of a bulk POST's usual time: all 1000 records or none`, async () => {
      const { child, url } = await servers[n]!;
      const client = await createClient(t.store, { partner: 'killed', variant: 'igaming' }, { alg: 'scrypt', N: 1024, r: 8, p: 1, keylen: 32 });
      const tokenRes = await fetch(`${url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret }) });
      const token = ((await tokenRes.json()) as { access_token: string }).access_token;
      const post = (prefix: string) => fetch(`${url}/api/v1/igaming/customers/bulk`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(Array.from({ length: 1000 }, (_, i) => customer(`${prefix}${i}`))),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }), () => undefined);
      // A first bulk, answered: it is stored whole, and it times the next one.
      const started = performance.now();
      const warm = await post(`w${n}-`);
      const usualMs = performance.now() - started;
      assert.equal(warm?.status, 200);
      assert.equal(await rowsOf(`w${n}-`), 1000);
      const prefix = `k${n}-`;
      const answer = post(prefix);
      await new Promise((r) => setTimeout(r, usualMs * fraction));
      child.kill('SIGKILL');
      const answered = await answer;
      if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
      const rows = await rowsOf(prefix);
      if (process.env.DEBUG_KILL) console.log(fraction, Math.round(usualMs), rows, answered?.status);
      assert.ok(rows === 0 || rows === 1000, `${rows} of 1000 records stored`);
      if (answered?.status === 200) assert.equal(rows, 1000, 'answered 200, so committed');
    });
  });
});
