/**
 * Sign-in rate limiting of the console (src/console/throttle.ts): wrong passwords are counted in
 * the store, so two servers on one store (two processes of `serve`: two apps with their own
 * connections here) share the count.
 */
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import type { KdfParams } from '../../src/access/secret-hash.js';
import { buildApi } from '../../src/cli/server.js';
import { addUser } from '../../src/access/console-users.js';
import { silentLogger } from '../../src/log.js';
import { openStore, type Store } from '../../src/store/store.js';
import { loaderWith } from '../support/loader.js';
import { fixedClock, STORES, type TestStore } from '../support/stores.js';

const TEST_KDF: KdfParams = { alg: 'scrypt', N: 1024, r: 8, p: 1, keylen: 32 };
const PASSWORD = 'the-right-password';

for (const backend of STORES) {
  describe(`console sign-in rate limiting (${backend.name})`, function () {
    this.timeout(30_000);
    const clock = fixedClock('2026-11-23T09:00:00.000Z');
    let t: TestStore;
    let second: Store;
    let apps: FastifyInstance[];

    const appOf = (store: Store) => buildApi({ store, loader: loaderWith(store, []), logger: silentLogger() }, { env: { PARTNER_SYNC_JWT_SECRET: 'x'.repeat(40) } });
    const attempt = (app: FastifyInstance, name: string, password: string, address = '10.0.0.1') =>
      app.inject({ method: 'POST', url: '/console/login', remoteAddress: address, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ name, password }).toString() });

    beforeEach(async () => {
      clock.set('2026-11-23T09:00:00.000Z');
      t = await backend.create(clock);
      await addUser(t.store, 'olga', 'operator', PASSWORD, TEST_KDF);
      await addUser(t.store, 'max', 'manager', PASSWORD, TEST_KDF);
      // A second server on the same store (SQLite: the same file; PostgreSQL: the same schema).
      second = await openStore({ url: t.url, clock });
      apps = [await appOf(t.store), await appOf(second)];
    });
    afterEach(async () => {
      for (const app of apps ?? []) await app.close();
      await second?.close();
      await t?.drop();
    });

    it('locks a user out after 5 wrong passwords in 15 minutes, counted across servers: 429 with Retry-After, even with the right password; recorded', async () => {
      for (let i = 0; i < 5; i++) {
        const res = await attempt(apps[i % 2]!, 'olga', `wrong-${i}`);
        assert.equal(res.statusCode, 401, `attempt ${i + 1}`);
        clock.set(new Date(clock().getTime() + 60_000).toISOString());
      }
      // Now 09:05; the first failure (09:00) leaves the window at 09:15.
      const locked = await attempt(apps[0]!, 'olga', PASSWORD);
      assert.equal(locked.statusCode, 429);
      assert.equal(locked.headers['retry-after'], String(10 * 60));
      assert.match(locked.body, /Too many wrong passwords/);
      assert.equal(locked.headers['set-cookie'], undefined, 'no session while locked out');
      assert.equal((await attempt(apps[1]!, 'olga', PASSWORD)).statusCode, 429, 'the other server refuses too');
      // Another user from another address is not affected.
      assert.equal((await attempt(apps[0]!, 'max', PASSWORD, '10.0.0.2')).statusCode, 303);
      const rows = (await t.store.knex('console_audit').where('user_name', 'olga').orderBy('id').select('action', 'target')) as { action: string; target: string }[];
      assert.deepEqual(rows.map((r) => r.action), [...Array(5).fill('sign in failed'), 'sign in refused', 'sign in refused']);
      assert.equal(rows[0]!.target, '10.0.0.1');
      // Once the oldest failure has aged out, the right password signs in again.
      clock.set('2026-11-23T09:15:00.001Z');
      assert.equal((await attempt(apps[1]!, 'olga', PASSWORD)).statusCode, 303);
    });

    it('a successful sign-in clears the user\'s count', async () => {
      for (let i = 0; i < 4; i++) assert.equal((await attempt(apps[0]!, 'olga', 'wrong')).statusCode, 401);
      assert.equal((await attempt(apps[1]!, 'olga', PASSWORD)).statusCode, 303);
      for (let i = 0; i < 4; i++) assert.equal((await attempt(apps[0]!, 'olga', 'wrong')).statusCode, 401);
      assert.equal((await attempt(apps[1]!, 'olga', PASSWORD)).statusCode, 303);
    });

    it('locks an address out after 10 wrong passwords over any names (unknown names included)', async () => {
      for (let i = 0; i < 10; i++) assert.equal((await attempt(apps[i % 2]!, `guess-${i}`, 'wrong', '10.9.9.9')).statusCode, 401);
      const locked = await attempt(apps[0]!, 'max', PASSWORD, '10.9.9.9');
      assert.equal(locked.statusCode, 429);
      assert.equal(locked.headers['retry-after'], String(15 * 60));
      assert.equal((await attempt(apps[0]!, 'max', PASSWORD, '10.9.9.10')).statusCode, 303, 'another address signs in');
    });
  });
}
