/**
 * Minimisation at ingest (docs/personal-data.md): a partner's `personal_data` policy keeps, hashes
 * or drops each personal customer field before anything of the record is stored, on every face
 * (the load path, `import` with the partner's definition, a push by a client with its own policy),
 * and the duplicate-identity rule still links equal e-mails under `hash`. The store's own bytes (the
 * SQLite file, a pg_dump of the schema) are searched for the values sent.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nock from 'nock';
import { runPartner } from '../../jobs/run-partner.js';
import { createClient } from '../../src/access/api-clients.js';
import { loadDefinition } from '../../src/config/load-definitions.js';
import { noRedaction, silentLogger } from '../../src/log.js';
import { reconcile, reconciliationLines } from '../../src/onboarding/reconcile.js';
import { listRejects } from '../../src/store/rejects.js';
import type { PersonalData } from '../../src/spec/personal-data.js';
import { cust, fraudFrom } from '../fraud/harness.js';
import { listFlags } from '../../src/fraud/flags.js';
import { startApi } from '../support/api.js';
import { runCli } from '../support/cli.js';
import { loaderWith, loaderWithEveryJob } from '../support/loader.js';
import { raw } from '../support/records.js';
import { fixedClock, PG_URL, STORES, type TestStore } from '../support/stores.js';

const KEY = 'k'.repeat(16) + 'test-key-of-this-suite';
const hmac = (field: string, normalized: string): string => `hmac:${createHmac('sha256', KEY).update(`${field}\u0000${normalized}`).digest('hex')}`;

/** Everything the store holds, as bytes: the SQLite file after a WAL checkpoint, or a pg_dump of the test's schema. */
async function storeBytes(t: TestStore): Promise<string> {
  if (t.url.startsWith('sqlite:')) {
    await t.store.knex.raw('PRAGMA wal_checkpoint(TRUNCATE)');
    const file = t.url.slice('sqlite:'.length);
    return readFileSync(file).toString('latin1') + readFileSync(`${file}-wal`, { flag: 'a+' }).toString('latin1');
  }
  const schema = /search_path%3D(\w+)/.exec(t.url)?.[1] ?? /search_path=(\w+)/.exec(decodeURIComponent(t.url))?.[1];
  assert.ok(schema, `no schema in ${t.url}`);
  return execFileSync('pg_dump', ['--data-only', '--schema', schema, PG_URL], { maxBuffer: 1 << 28 }).toString('latin1');
}

const SENT = ['Mia.Brackwater', 'miabrackwater', 'Brackwater', 'Zelda', 'not-an-email', 'Quill'];
const absent = (bytes: string, values: readonly string[]): string[] => values.filter((v) => bytes.toLowerCase().includes(v.toLowerCase()));

for (const backend of STORES) {
  describe(`personal data minimised at ingest (${backend.name})`, function () {
    // Loads with every job on: 7.5 s alone on PostgreSQL, past the suite's 30 s on a loaded machine.
    this.timeout(120_000);
    it('hash: equal e-mails stay linked by the duplicate-identity rule, no address or hashed name is stored, rejects keep the policy too; drop: the field is gone', async () => {
      const t = await backend.create(fixedClock('2026-11-22T10:00:00.000Z'));
      try {
        const loader = loaderWithEveryJob(t.store, { fraud: fraudFrom('rules: {}') });
        const personalData: PersonalData = { policy: { email: 'hash', first_name: 'hash', last_name: 'drop' }, key: KEY };
        const result = await loader.load({
          partner: 'casino', variant: 'igaming', entity: 'customers', runId: 'r1', personalData,
          records: raw([
            cust('c1', 'aff-1', { email: 'Mia.Brackwater+vip@GoogleMail.com', first_name: 'Mia', last_name: 'Brackwater' }),
            cust('c2', 'aff-2', { email: 'miabrackwater@gmail.com', first_name: 'MIA ', last_name: 'Brackwater' }),
            cust('c3', 'aff-2', { email: 'not-an-email', first_name: 'Zelda', last_name: 'Quill' }),
          ]),
        });
        assert.equal(result.loaded, 2);
        assert.deepEqual(result.rejects.map((r) => r.errors.map((e) => [e.field, e.rule])), [[['email', 'format']]]);

        const rows = await t.store.knex('customers').orderBy('customer_id').select('customer_id', 'email', 'first_name', 'last_name');
        assert.deepEqual(rows, [
          { customer_id: 'c1', email: hmac('email', 'miabrackwater@gmail.com'), first_name: hmac('first_name', 'mia'), last_name: null },
          { customer_id: 'c2', email: hmac('email', 'miabrackwater@gmail.com'), first_name: hmac('first_name', 'mia'), last_name: null },
        ]);
        const flags = await listFlags(t.store.knex, { rule: 'duplicate_identity' });
        assert.deepEqual(flags.map((f) => f.customers), [['c1', 'c2']]);

        const [reject] = await listRejects(t.store.knex, { partner: 'casino', status: 'open' });
        assert.deepEqual(JSON.parse(reject!.payload), { customer_id: 'c3', signup_date: '2026-11-01T00:00:00Z', affiliate_id: 'aff-2', email: hmac('email', 'not-an-email'), first_name: hmac('first_name', 'zelda') });

        assert.deepEqual(absent(await storeBytes(t), SENT), []);

        // The same customers sent again as the policy kept them (a replayed reject's hash) load as they are.
        const again = await loader.load({ partner: 'casino', variant: 'igaming', entity: 'customers', runId: 'r2', personalData, records: raw([cust('c1', 'aff-1', { email: rows[0]!.email as string })]) });
        assert.deepEqual([again.loaded, again.rejected], [1, 0]);
        assert.equal((await t.store.knex('customers').where('customer_id', 'c1').first('email')).email, hmac('email', 'miabrackwater@gmail.com'));
      } finally {
        await t.drop();
      }
    });

    it('a push by a client created with --personal-data stores what its policy keeps; another client of the partner keeps the fields', async () => {
      const t = await backend.create(fixedClock('2026-11-22T10:00:00.000Z'));
      const previous = process.env.PARTNER_SYNC_PERSONAL_DATA_KEY;
      process.env.PARTNER_SYNC_PERSONAL_DATA_KEY = KEY;
      const api = await startApi(t.store);
      try {
        const hashed = await createClient(t.store, { partner: 'acme', variant: 'igaming', personalData: { email: 'hash', last_name: 'drop' } });
        const plain = await createClient(t.store, { partner: 'acme', variant: 'igaming' });
        const push = async (c: { clientId: string; clientSecret: string }, record: object) => {
          const token = await api.token({ client_id: c.clientId, client_secret: c.clientSecret });
          const res = await fetch(`${api.url}/api/v1/igaming/customers`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(record) });
          assert.equal(res.status, 200, await res.text());
        };
        await push(hashed, cust('p1', 'aff-1', { email: 'Zelda.Quill@example.org', first_name: 'Zelda', last_name: 'Quill' }));
        await push(plain, cust('p2', 'aff-1', { email: 'kept@example.org', last_name: 'Kept' }));
        const rows = await t.store.knex('customers').orderBy('customer_id').select('customer_id', 'email', 'first_name', 'last_name');
        assert.deepEqual(rows, [
          { customer_id: 'p1', email: hmac('email', 'zelda.quill@example.org'), first_name: 'Zelda', last_name: null },
          { customer_id: 'p2', email: 'kept@example.org', first_name: null, last_name: 'Kept' },
        ]);
        assert.deepEqual(absent(await storeBytes(t), ['Zelda.Quill', 'Quill']), []);
      } finally {
        await api.close();
        if (previous === undefined) delete process.env.PARTNER_SYNC_PERSONAL_DATA_KEY;
        else process.env.PARTNER_SYNC_PERSONAL_DATA_KEY = previous;
        await t.drop();
      }
    });
  });
}

describe('personal_data in the connector definition (the CLI)', () => {
  const definition = (policy: string) => `partner: acme
variant: igaming
source:
  type: rest
  base_url: http://127.0.0.1:9/api
  auth:
    type: oauth2_client_credentials
    client_id: c
    client_secret: \${ACME_KEY}
  timeout: PT2S
  retries:
    max: 0
streams:
  customers:
    path: /customers
    incremental:
      mode: cursor
      cursor_field: last_modified_date
      from_param: modified_since
personal_data:
${policy}
`;

  function configWith(policy: string): { dir: string; env: Record<string, string> } {
    const dir = mkdtempSync(join(tmpdir(), 'partner-sync-pd-'));
    mkdirSync(join(dir, 'partners'));
    writeFileSync(join(dir, 'partners', 'acme.yaml'), definition(policy));
    return { dir, env: { ACME_KEY: 'x', STORE_URL: `sqlite:${join(dir, 'store.sqlite')}`, PARTNER_SYNC_PERSONAL_DATA_KEY: '' } };
  }

  it('check fails on hash without the key (file, path, reason) and warns when drop leaves the duplicate-identity rule without a key', async () => {
    const hash = configWith('  email: hash');
    const drop = configWith('  email: drop\n  first_name: drop');
    try {
      const failed = await runCli(['--config', hash.dir, 'check', '--partner', 'acme', '--json'], { env: hash.env });
      assert.equal(failed.code, 2, failed.stderr);
      const errors = (JSON.parse(failed.stdout) as { definition_errors: { file: string; path: string; message: string }[] }).definition_errors;
      assert.deepEqual(errors.map((e) => [e.file.endsWith('acme.yaml'), e.path]), [[true, 'personal_data']]);
      assert.match(errors[0]!.message, /PARTNER_SYNC_PERSONAL_DATA_KEY/);

      const warned = await runCli(['--config', drop.dir, 'check', '--partner', 'acme'], { env: drop.env });
      assert.match(warned.stdout, /^WARN acme: duplicate_identity cannot match e-mails: personal_data\.email is drop/m);
      assert.match(warned.stdout, /^WARN acme: duplicate_identity cannot match names: personal_data\.first_name is drop/m);
    } finally {
      rmSync(hash.dir, { recursive: true, force: true });
      rmSync(drop.dir, { recursive: true, force: true });
    }
  });

  it("import applies the partner definition's policy, also when the definition's source secrets are not set; a policy it cannot apply stops it with exit 2", async () => {
    const c = configWith('  email: hash\n  last_name: drop');
    try {
      const file = join(c.dir, 'customers.ndjson');
      writeFileSync(file, JSON.stringify(cust('i1', 'aff-1', { email: 'Ivo.Lark@example.org', first_name: 'Ivo', last_name: 'Lark' })) + '\n');
      const refused = await runCli(['--config', c.dir, 'import', 'acme', '--variant', 'igaming', '--entity', 'customers', file], { env: c.env });
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, /acme\.yaml: personal_data: hash needs the key in the environment variable PARTNER_SYNC_PERSONAL_DATA_KEY/);

      // The source's secret is not set where the import runs (it lives in the worker's environment): the policy still applies.
      const env: Record<string, string> = { ...c.env, PARTNER_SYNC_PERSONAL_DATA_KEY: KEY };
      delete env.ACME_KEY;
      const done = await runCli(['--config', c.dir, 'import', 'acme', '--variant', 'igaming', '--entity', 'customers', '--json', file], { env });
      assert.equal(done.code, 0, done.stderr);
      assert.equal((JSON.parse(done.stdout) as { loaded: number }).loaded, 1);
      const bytes = readFileSync(join(c.dir, 'store.sqlite')).toString('latin1') + readFileSync(join(c.dir, 'store.sqlite-wal'), { flag: 'a+' }).toString('latin1');
      assert.deepEqual(absent(bytes, ['Ivo.Lark', 'Lark']), []);
      assert.ok(bytes.includes(hmac('email', 'ivo.lark@example.org')));
      assert.ok(!bytes.includes(KEY), 'the hash key is not in the store');
    } finally {
      rmSync(c.dir, { recursive: true, force: true });
    }
  });
});

describe('reconcile under a personal_data policy', () => {
  const BASE = 'https://pd.partner.example';
  const players = [
    { player: 'P-1', aff: 'A1', joined: '2026-11-20T09:00:00Z', mail: 'Nora.Finch+x@GoogleMail.com', given: 'Nora', family: 'Finch' },
    { player: 'P-2', aff: 'A2', joined: '2026-11-20T10:00:00Z', mail: 'olaf@example.org', given: 'Olaf', family: 'Berg' },
  ];
  const text = `partner: pdr
variant: igaming
source:
  type: rest
  base_url: ${BASE}
  auth:
    type: bearer
    token: \${PDR_TOKEN}
streams:
  customers:
    path: /players
    pagination: { type: page, per_page: 50 }
    incremental: { cursor_field: last_modified_date, from_param: since, start: 2026-11-19T00:00:00Z }
    mapping:
      passthrough: false
      fields:
        customer_id: player
        affiliate_id: aff
        signup_date: joined
        last_modified_date: joined
        email: mail
        first_name: given
        last_name: family
personal_data:
  email: hash
  first_name: drop
`;
  for (const backend of STORES) {
    it(`compares the source's personal fields as the policy keeps them: clean, and no value of them in its lines (${backend.name})`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'partner-sync-pd-reconcile-'));
      const t = await backend.create();
      try {
        nock(BASE).persist().get('/players').query(true).reply(200, (uri) => ({ data: new URL(uri, BASE).searchParams.get('page') === '1' ? players : [] }));
        mkdirSync(join(dir, 'partners'));
        const file = join(dir, 'partners', 'pdr.yaml');
        writeFileSync(file, text);
        const loaded = await loadDefinition(file, { PDR_TOKEN: 'pdr-token', PARTNER_SYNC_PERSONAL_DATA_KEY: KEY });
        assert.ok(loaded.definition, JSON.stringify(loaded.errors));
        const def = loaded.definition;
        const clock = () => new Date('2026-11-22T10:00:00Z');
        const deps = { clock, logger: silentLogger(), redact: noRedaction };
        const results = await runPartner({ ...deps, loader: loaderWith(t.store, []) }, def, { kind: 'backfill', from: '2026-11-19', to: '2026-11-22' });
        assert.deepEqual(results.map((r) => [r.stream, r.status, r.counts.loaded]), [['customers', 'succeeded', 2]]);
        assert.deepEqual(await t.store.knex('customers').orderBy('customer_id').select('email', 'first_name', 'last_name'), [
          { email: hmac('email', 'norafinch@gmail.com'), first_name: null, last_name: 'Finch' },
          { email: hmac('email', 'olaf@example.org'), first_name: null, last_name: 'Berg' },
        ]);
        const r = await reconcile({ ...deps, store: t.store }, def, '2026-11-19', '2026-11-21', undefined, { sample: 10, seed: 3 });
        const lines = reconciliationLines(r).join('\n');
        assert.equal(r.ok, true, lines);
        assert.deepEqual(absent(lines + JSON.stringify(r), ['Nora', 'olaf@', 'Olaf', 'GoogleMail']), []);
      } finally {
        nock.cleanAll();
        await t.drop();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
