/**
 * The go-live checklist's state in the store (migration 011) on every store backend: the last
 * verification of each item, and its first pass kept once set (the go-live time).
 */
import assert from 'node:assert/strict';
import { checklistStatus, saveChecklist } from '../../src/onboarding/checklist.js';
import { fixedClock, STORES, type TestStore } from '../support/stores.js';

for (const backend of STORES) {
  describe(`onboarding checklist state (${backend.name})`, () => {
    let made: TestStore;
    const clock = fixedClock('2026-11-20T10:00:00.000Z');
    beforeEach(async () => void (made = await backend.create(clock)));
    afterEach(async () => made.drop());

    it('keeps the last result of each item and the time it first passed', async () => {
      const { store } = made;
      await saveChecklist(store.knex, 'acme', [{ item: 'reconcile_clean', ok: true, detail: 'no difference' }, { item: 'go_live', ok: false, detail: 'waiting for: freshness_24h' }], store.now());
      clock.set('2026-11-21T10:00:00.000Z');
      await saveChecklist(store.knex, 'acme', [{ item: 'reconcile_clean', ok: false, detail: '1 day(s) differ' }, { item: 'go_live', ok: true, detail: 'every item verified' }], store.now());
      await saveChecklist(store.knex, 'other', [{ item: 'go_live', ok: false, detail: 'waiting' }], store.now());
      assert.deepEqual(await checklistStatus(store.knex, 'acme'), {
        acme: [
          { item: 'reconcile_clean', ok: false, detail: '1 day(s) differ', checked_at: '2026-11-21T10:00:00.000000Z', first_ok_at: '2026-11-20T10:00:00.000000Z' },
          { item: 'go_live', ok: true, detail: 'every item verified', checked_at: '2026-11-21T10:00:00.000000Z', first_ok_at: '2026-11-21T10:00:00.000000Z' },
        ],
      });
      assert.deepEqual(Object.keys(await checklistStatus(store.knex)).sort(), ['acme', 'other']);
    });
  });
}
