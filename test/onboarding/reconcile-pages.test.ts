/**
 * `reconcile` against a REST partner whose pages repeat records at their boundaries (a partner
 * writing while its pages are read): `meta.total` is held against the distinct keys the pages
 * gave. A repeat is a note, not a difference; a record the pages never gave is a difference even
 * when the repeats make the raw count come out at `meta.total`. Over HTTP (nock), into every store.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nock from 'nock';
import { runPartner } from '../../jobs/run-partner.js';
import type { PartnerDefinition } from '../../src/config/definition.js';
import { loadDefinition } from '../../src/config/load-definitions.js';
import { noRedaction, silentLogger } from '../../src/log.js';
import { reconcile, reconciliationLines } from '../../src/onboarding/reconcile.js';
import { loaderWith } from '../support/loader.js';
import { STORES, type TestStore } from '../support/stores.js';

const BASE = 'https://shifting-pages.partner.example';
const PATH = '/api/v1/igaming/customers';
const DAY = '2026-02-01';
const definitionText = (perPage: number) => `partner: shifting
variant: igaming
source:
  type: rest
  base_url: ${BASE}
  auth:
    type: bearer
    token: \${SHIFTING_TOKEN}
streams:
  customers:
    path: ${PATH}
    pagination: { type: page, per_page: ${perPage} }
    incremental: { cursor_field: last_modified_date, from_param: modified_since, start: 2026-01-01T00:00:00Z }
`;

const customer = (id: string, hour: number) => ({ customer_id: id, signup_date: `${DAY}T${String(hour).padStart(2, '0')}:00:00Z`, affiliate_id: 'AFF-1', last_modified_date: `${DAY}T${String(hour).padStart(2, '0')}:30:00Z` });

/**
 * The partner's list, by page and per_page, with `meta.total`. `overlap`: every page after the
 * first starts with the last record of the page before, as when a record is written ahead of the
 * page being read.
 */
function partner(rows: () => Record<string, unknown>[], total: () => number, overlap: () => boolean): void {
  nock(BASE)
    .persist()
    .get(PATH)
    .query(true)
    .reply((uri) => {
      const q = new URL(uri, BASE).searchParams;
      const page = Number(q.get('page') ?? '1');
      const size = Number(q.get('per_page'));
      const start = (page - 1) * (overlap() && size > 1 ? size - 1 : size);
      return [200, { data: rows().slice(start, start + size), meta: { total: total() } }];
    });
}

async function definition(dir: string, perPage: number): Promise<PartnerDefinition> {
  const file = join(dir, 'shifting.yaml');
  writeFileSync(file, definitionText(perPage));
  const loaded = await loadDefinition(file, { SHIFTING_TOKEN: 'shifting-token' });
  assert.ok(loaded.definition, JSON.stringify(loaded.errors));
  return loaded.definition;
}

for (const backend of STORES) {
  describe(`reconcile: pages that repeat records (${backend.name} store)`, function () {
    this.timeout(60_000);
    let dir: string;
    let t: TestStore;
    beforeEach(async () => {
      dir = mkdtempSync(join(tmpdir(), 'partner-sync-reconcile-pages-'));
      t = await backend.create();
    });
    afterEach(async () => {
      nock.cleanAll();
      await t.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    const sync = async (def: PartnerDefinition) => {
      const results = await runPartner({ loader: loaderWith(t.store, []), clock: t.store.clock, logger: silentLogger(), redact: noRedaction }, def, { kind: 'run', scheduledFor: new Date() });
      assert.deepEqual(results.map((r) => r.status), ['succeeded'], JSON.stringify(results));
    };
    const deps = () => ({ store: t.store, clock: t.store.clock, logger: silentLogger(), redact: noRedaction });

    it('an exact sync whose pages repeat a record at each boundary: meta.total agrees with the distinct keys, a note, no difference', async () => {
      const rows = ['C1', 'C2', 'C3', 'C4', 'C5'].map((id, i) => customer(id, i + 1));
      let overlap = false;
      partner(() => rows, () => rows.length, () => overlap);
      const def = await definition(dir, 2);
      await sync(def);
      overlap = true;
      const result = await reconcile(deps(), def, DAY, DAY);
      // Pages: C1 C2 | C2 C3 | C3 C4 | C4 C5 | C5 | (empty): 9 records, 5 keys.
      assert.deepEqual(result.totals, [{ entity: 'customers', window: `changed since ${DAY}T00:00:00Z`, partner_total: 5, distinct: 5, read: 9, repeated: 4, ok: true }]);
      assert.equal(result.ok, true);
      assert.deepEqual(result.days.map((d) => [d.day, d.source.count, d.store.count, d.ok]), [[DAY, 5, 5, true]]);
      const lines = reconciliationLines(result);
      assert.ok(lines.includes(`note customers changed since ${DAY}T00:00:00Z: its pages gave 9 records for 5 keys: 4 repeated across pages (a partner writing while its pages are read shifts them), not a difference`), lines.join('\n'));
      assert.equal(lines.at(-1), `reconciled: shifting ${DAY}..${DAY}, no difference`);
      assert.ok(!lines.some((l) => l.startsWith('DIFF')), lines.join('\n'));
    });

    it('a record the pages never gave is a difference, though the repeats bring the raw count up to meta.total', async () => {
      // The partner holds C1..C5 (meta.total 5), its pages skip C3; the store holds what the pages gave.
      const rows = ['C1', 'C2', 'C4', 'C5'].map((id, i) => customer(id, i + 1));
      let overlap = false;
      partner(() => rows, () => 5, () => overlap);
      const def = await definition(dir, 3);
      await sync(def);
      overlap = true;
      const result = await reconcile(deps(), def, DAY, DAY);
      // Pages: C1 C2 C4 | C4 C5 | (empty): 5 records, as many as meta.total says, of 4 keys.
      assert.deepEqual(result.totals, [{ entity: 'customers', window: `changed since ${DAY}T00:00:00Z`, partner_total: 5, distinct: 4, read: 5, repeated: 1, ok: false }]);
      assert.equal(result.ok, false);
      const lines = reconciliationLines(result);
      assert.ok(lines.includes(`DIFF customers changed since ${DAY}T00:00:00Z: the partner's meta.total is 5, its pages gave 4 distinct records (5 with 1 repeated across pages)`), lines.join('\n'));
      assert.equal(lines.at(-1), `differences: shifting ${DAY}..${DAY}: 0 day(s) differ, 1 meta.total disagrees`);
    });
  });
}
