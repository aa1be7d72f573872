/**
 * A partner API that sends ids as JSON numbers: integers load as their decimal text; an id beyond
 * 2^53 − 1, which JSON parsing has already rounded, is rejected with a message naming the field
 * instead of stored under another customer's id. Over HTTP (nock), through the sync job, into
 * every store.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nock from 'nock';
import { runPartner } from '../../jobs/run-partner.js';
import { loadDefinition } from '../../src/config/load-definitions.js';
import { noRedaction, silentLogger } from '../../src/log.js';
import { listRejects } from '../../src/store/rejects.js';
import { loaderWith } from '../support/loader.js';
import { storedByKey } from '../support/sandbox.js';
import { STORES } from '../support/stores.js';

const BASE = 'https://numeric-ids.partner.example';
const PATH = '/api/v1/igaming/customers';
const DEFINITION = `partner: numeric-ids
variant: igaming
source:
  type: rest
  base_url: ${BASE}
  auth:
    type: bearer
    token: \${NUMERIC_IDS_TOKEN}
streams:
  customers:
    path: ${PATH}
    incremental: { cursor_field: last_modified_date, from_param: modified_since, start: 2026-01-01T00:00:00Z }
    mapping:
      fields:
        affiliate_id: aff
`;
// The body as the partner writes it: the third id has 20 digits, beyond what a JSON number keeps.
const PAGE = `{"data": [
  {"customer_id": 4711, "signup_date": "2026-02-01T10:00:00Z", "aff": 77, "last_modified_date": "2026-02-01T10:00:00Z"},
  {"customer_id": 9007199254740991, "signup_date": "2026-02-01T11:00:00Z", "aff": "AFF-1", "last_modified_date": "2026-02-01T11:00:00Z"},
  {"customer_id": 12345678901234567891, "signup_date": "2026-02-01T12:00:00Z", "aff": "AFF-1", "last_modified_date": "2026-02-01T12:00:00Z"},
  {"customer_id": 1.5, "signup_date": "2026-02-01T13:00:00Z", "aff": "AFF-1", "last_modified_date": "2026-02-01T13:00:00Z"}
]}`;

for (const backend of STORES) {
  describe(`REST numeric ids (${backend.name} store)`, function () {
    this.timeout(60_000);
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'partner-sync-numeric-'));
    });
    afterEach(() => {
      nock.cleanAll();
      rmSync(dir, { recursive: true, force: true });
    });

    it('integer ids load as their decimal text; a rounded id and a fraction are rejected, naming the field', async () => {
      const t = await backend.create();
      try {
        const file = join(dir, 'numeric-ids.yaml');
        writeFileSync(file, DEFINITION);
        const loaded = await loadDefinition(file, { NUMERIC_IDS_TOKEN: 'numeric-token' });
        assert.ok(loaded.definition, JSON.stringify(loaded.errors));
        nock(BASE).get(PATH).query((q) => q.page === '1').reply(200, PAGE, { 'Content-Type': 'application/json' });
        nock(BASE).get(PATH).query((q) => q.page === '2').reply(200, { data: [] });

        const results = await runPartner({ loader: loaderWith(t.store, []), clock: t.store.clock, logger: silentLogger(), redact: noRedaction },
          loaded.definition, { kind: 'run', scheduledFor: new Date() });
        assert.deepEqual(results.map((r) => r.status), ['succeeded'], JSON.stringify(results));

        const customers = await storedByKey(t.store, 'numeric-ids', 'igaming', 'customers');
        assert.deepEqual([...customers.keys()].sort(), ['4711', '9007199254740991']);
        assert.equal(customers.get('4711')?.affiliate_id, '77');
        const rejects = await listRejects(t.store.knex, { partner: 'numeric-ids' });
        assert.deepEqual(rejects.map((r) => r.errors), [
          [{ field: 'customer_id', rule: 'mapping', message: 'customer_id: the integer 12345678901234567000 is beyond 9007199254740991 (2^53 − 1), where a JSON number is no longer read exactly: the id the partner sent is not known; send it as a string' }],
          [{ field: 'customer_id', rule: 'type', message: 'customer_id: must be a string (got number 1.5)' }],
        ]);
      } finally {
        await t.drop();
      }
    });
  });
}
