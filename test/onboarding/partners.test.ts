/**
 * Onboarding measured on partners shaped like real ones rather than like the sandbox: for each
 * fixture (test/onboarding/fixtures/), init's draft, the fixture's hand edits (counted), then
 * `check` passes, `reconcile` is clean and the store holds the partner's records. The draft must
 * load before any edit; the average number of edits per partner must stay at most 2. The last
 * test prints the table docs/onboarding.md and the README show.
 */
import assert from 'node:assert/strict';
import { STORES, type TestStore } from '../support/stores.js';
import type { Fixture } from './fixtures/fixture.js';
import { onboard, type Onboarded } from './fixtures/run.js';
import { challengePlatform, crmRest, specQuiet } from './fixtures/rest-fixtures.js';
import { casinoLedger, mt4Prop, propTerse, sportsbookBackOffice, warehouseLocal } from './fixtures/sql-fixtures.js';

export const FIXTURES: (() => Fixture)[] = [propTerse, specQuiet, crmRest, sportsbookBackOffice, mt4Prop, challengePlatform, warehouseLocal, casinoLedger];

const SOURCES = { mysql: 'MariaDB', postgres: 'PostgreSQL' } as const;
const sourceOf = (f: Fixture): string => (f.source.kind === 'rest' ? 'REST (local HTTP server)' : `${SOURCES[f.source.client]} ${f.source.kind === 'db' ? 'replica' : 'warehouse'}`);

for (const backend of STORES) {
  describe(`onboarding partners shaped like real ones on a ${backend.name} store: edits after init to a passing check and a clean reconcile`, function () {
    this.timeout(120_000);
    const done: (Onboarded & { fixture: Fixture })[] = [];
    let started = 0;
    before(() => {
      started = performance.now();
    });
    for (const make of FIXTURES) {
      const fixture = make();
      it(`${fixture.id}: init, ${fixture.edits.length} edit(s), check, backfill, clean reconcile, the partner's records in the store`, async () => {
        let store: TestStore | undefined;
        try {
          store = await backend.create();
          done.push({ ...(await onboard(fixture, store.url)), fixture });
        } finally {
          await store?.drop();
        }
      });
    }

    it('averages at most 2 edits per partner over at least 8 partners', () => {
      assert.equal(done.length, FIXTURES.length, 'every fixture onboarded');
      const edits = done.reduce((n, d) => n + d.edits, 0);
      const lines = ['| fixture | source | hand edits | TODOs to confirm |', '|---|---|---|---|'];
      for (const d of done) lines.push(`| \`${d.id}\`: ${d.title} | ${sourceOf(d.fixture)} | ${d.edits}${d.fixture.flags ? ` (+ \`${d.fixture.flags.join(' ')}\`)` : ''} | ${d.todos} |`);
      lines.push(`| **average over ${done.length}** | | **${(edits / done.length).toFixed(2)}** | |`);
      for (const d of done) for (const e of d.fixture.edits) lines.push(`${d.id}: ${e.replace.trim().replace(/^\$1/, '')} (${e.why})`);
      console.log(`${lines.map((l) => `        ${l}`).join('\n')}\n        ${done.length} fixtures onboarded in ${((performance.now() - started) / 1000).toFixed(1)} s`);
      assert.ok(done.length >= 8);
      assert.ok(edits / done.length <= 2, `${edits} edits over ${done.length} partners`);
    });
  });
}
