/**
 * Onboarding measured on partners shaped like real ones rather than like the sandbox: for each
 * fixture (test/onboarding/fixtures/), init's draft, the fixture's hand edits (counted), then
 * `check` passes, `reconcile` is clean and the store holds the partner's records. The draft must
 * load before any edit; the average number of edits per partner must stay at most 2. The last
 * test prints the table the README's onboarding page shows.
 */
import assert from 'node:assert/strict';
import { STORES, type TestStore } from '../support/stores.js';
import type { Fixture } from './fixtures/fixture.js';
import { onboard, type Onboarded } from './fixtures/run.js';
import { challengePlatform, crmRest, specQuiet } from './fixtures/rest-fixtures.js';
import { casinoLedger, mt4Prop, propTerse, sportsbookBackOffice, warehouseLocal } from './fixtures/sql-fixtures.js';

export const FIXTURES: (() => Fixture)[] = [propTerse, specQuiet, sportsbookBackOffice, crmRest, mt4Prop, challengePlatform, casinoLedger, warehouseLocal];

describe('onboarding partners shaped like real ones: edits after init to a passing check and a clean reconcile', function () {
  this.timeout(120_000);
  const done: Onboarded[] = [];
  const started = performance.now();
  // Each fixture on one store, in turn (the stores' own behaviour is the load path's tests' subject).
  FIXTURES.forEach((make, i) => {
    const fixture = make();
    const backend = STORES[i % STORES.length];
    it(`${fixture.id} on ${backend?.name}: init, ${fixture.edits.length} edit(s), check, backfill, clean reconcile, the partner's records in the store`, async () => {
      assert.ok(backend);
      let store: TestStore | undefined;
      try {
        store = await backend.create();
        done.push(await onboard(fixture, store.url));
      } finally {
        await store?.drop();
      }
    });
  });

  it('averages at most 2 edits per partner over at least 8 partners', () => {
    assert.equal(done.length, FIXTURES.length, 'every fixture onboarded');
    const edits = done.reduce((n, d) => n + d.edits, 0);
    const lines = ['| partner | edits | TODOs to confirm | draft passed check as written |', '|---|---|---|---|'];
    for (const d of done) lines.push(`| ${d.title} | ${d.edits} | ${d.todos} | ${d.draftChecked ? 'yes' : 'no'} |`);
    lines.push(`| **average over ${done.length}** | **${(edits / done.length).toFixed(2)}** | | |`);
    console.log(`${lines.map((l) => `      ${l}`).join('\n')}\n      fixtures onboarded in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    assert.ok(done.length >= 8);
    assert.ok(edits / done.length <= 2, `${edits} edits over ${done.length} partners`);
  });
});
