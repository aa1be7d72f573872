import assert from 'node:assert/strict';
import type { KdfParams } from '../../src/access/secret-hash.js';
import { addUser, audit, checkPassword, endSession, findSession, listAudit, startSession, UserError } from '../../src/access/console-users.js';
import { fixedClock, STORES, type TestStore } from '../support/stores.js';

const TEST_KDF: KdfParams = { alg: 'scrypt', N: 1024, r: 8, p: 1, keylen: 32 };

for (const backend of STORES) {
  describe(`console users, sessions and audit (${backend.name})`, () => {
    let t: TestStore;
    const clock = fixedClock('2026-11-23T09:00:00.000Z');
    beforeEach(async () => {
      clock.set('2026-11-23T09:00:00.000Z');
      t = await backend.create(clock);
    });
    afterEach(async () => t?.drop());

    it('signs a user in with the right password only; a session ends at logout or after 12 hours', async () => {
      await addUser(t.store, 'maria', 'manager', 'a-long-password', TEST_KDF);
      await assert.rejects(addUser(t.store, 'maria', 'operator', 'another-password', TEST_KDF), (e: Error) => e instanceof UserError && e.message === 'user maria already exists');
      await assert.rejects(addUser(t.store, 'short', 'operator', 'short', TEST_KDF), /at least 10 characters/);
      assert.equal(await checkPassword(t.store, 'maria', 'a-long-passworD'), undefined);
      assert.equal(await checkPassword(t.store, 'nobody', 'a-long-password'), undefined);
      const user = await checkPassword(t.store, 'maria', 'a-long-password');
      assert.deepEqual(user, { name: 'maria', role: 'manager' });

      const session = await startSession(t.store, user!);
      const row = (await t.store.knex('console_sessions').first()) as Record<string, unknown>;
      assert.notEqual(row.id_hash, session.id, 'the store keeps a hash of the cookie value, not the value');
      assert.deepEqual(await findSession(t.store, session.id), { user: { name: 'maria', role: 'manager' }, csrf: session.csrf });
      clock.set('2026-11-23T20:59:59.000Z');
      assert.ok(await findSession(t.store, session.id), 'still valid just before 12 hours');
      clock.set('2026-11-23T21:00:00.000Z');
      assert.equal(await findSession(t.store, session.id), undefined, 'expired after 12 hours');

      clock.set('2026-11-23T22:00:00.000Z');
      const second = await startSession(t.store, user!);
      await endSession(t.store, second.id);
      assert.equal(await findSession(t.store, second.id), undefined);
    });

    it('keeps every action with who, when and what, latest first', async () => {
      await audit(t.store, 'olga', 'replay rejects', 'lucky-casino', 'customers: 1 replayed, 1 loaded');
      clock.set('2026-11-23T09:05:00.000Z');
      await audit(t.store, 'maria', 'fraud confirm', 'flag #3', 'same person');
      const entries = await listAudit(t.store);
      assert.deepEqual(entries.map((e) => [e.at.slice(0, 19), e.user, e.action, e.target, e.detail]), [
        ['2026-11-23T09:05:00', 'maria', 'fraud confirm', 'flag #3', 'same person'],
        ['2026-11-23T09:00:00', 'olga', 'replay rejects', 'lucky-casino', 'customers: 1 replayed, 1 loaded'],
      ]);
    });
  });
}
