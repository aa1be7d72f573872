/**
 * `reconcile` judges values, not only keys: a partner's transactions on a real MariaDB and
 * PostgreSQL replica and on a REST API (Malta local times without a zone, amounts in cents in
 * `amt_minor`, the currency in `ccy`, status words), synced into every store through a definition
 * that is right, or wrong in one way (a constant currency, a status mapped to the wrong word, cents
 * read as units, local times read an hour off). The right one reconciles clean; each wrong one
 * exits 1 with a line naming the field and a record's key, read from what the source itself says
 * (its column, its code's word, its column's name, its clock), not from the definition.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DateTime } from 'luxon';
import nock from 'nock';
import { runPartner } from '../../jobs/run-partner.js';
import type { PartnerDefinition } from '../../src/config/definition.js';
import { loadDefinition } from '../../src/config/load-definitions.js';
import { noRedaction, silentLogger } from '../../src/log.js';
import { reconcile, reconciliationLines } from '../../src/onboarding/reconcile.js';
import { SERVER_DATABASES, type TestDatabase } from '../sql/databases.js';
import { loaderWith } from '../support/loader.js';
import { STORES, type TestStore } from '../support/stores.js';
import { cli } from './support.js';

/** The partner's zone: Malta; on a MariaDB without time-zone tables UTC (a named zone needs them until the connector converts by itself). */
let ZONE = 'Europe/Malta';
const BASE = 'https://values.partner.example';
const STATES = ['SETTLED', 'PENDING', 'REJECTED', 'REVERSED'] as const;
const KINDS = ['DEPOSIT', 'WITHDRAWAL', 'BONUS'] as const;
const N = 40;
const PLAYERS = 7;

/** The partner's players, who joined a day before `now` (Malta local time). */
const players = (now: number) => Array.from({ length: PLAYERS }, (_v, i) => ({ player: 100 + i, aff: `A${i % 2}`, joined: DateTime.fromMillis(now - 86_400_000 - i * 600_000, { zone: ZONE }).toFormat('yyyy-MM-dd HH:mm:ss') }));

interface Move {
  tx_id: number;
  player: number;
  kind: string;
  amt_minor: number;
  ccy: string;
  /** Malta local time, zone-less text. */
  booked: string;
}

/** The partner's moves up to ten minutes before `now`, one every 37 minutes, in Malta local time. */
function moves(now: number): Move[] {
  return Array.from({ length: N }, (_v, i) => ({
    tx_id: 9001 + i,
    player: 100 + (i % 7),
    kind: KINDS[i % 3] as string,
    amt_minor: 1250 + i * 101,
    ccy: i % 4 === 3 ? 'SEK' : 'EUR',
    booked: DateTime.fromMillis(now - (10 + (N - 1 - i) * 37) * 60_000, { zone: ZONE }).toFormat('yyyy-MM-dd HH:mm:ss'),
  }));
}

type Wrong = 'none' | 'currency' | 'status' | 'units' | 'zone';

/** The mapping lines of the transactions stream, right or wrong in one way. */
function mapping(wrong: Wrong, rest: boolean): string[] {
  // London is an hour behind Malta all year.
  const zone = wrong === 'zone' ? 'Europe/London' : ZONE;
  return [
    '    mapping:', '      passthrough: false', '      fields:',
    '        transaction_id: tx_id', '        customer_id: player',
    '        transaction_type: { from: kind, map: { DEPOSIT: deposit, WITHDRAWAL: withdrawal, BONUS: bonus } }',
    wrong === 'units' ? '        amount_currency: amt_minor' : '        amount_currency: { from: amt_minor, minor_units: 2 }',
    wrong === 'currency' ? '        currency: { const: USD }' : '        currency: ccy',
    rest ? `        transaction_date: { from: booked, datetime: { format: sql, zone: ${zone} } }` : '        transaction_date: booked',
    `        status: { from: state, map: { SETTLED: approved, PENDING: pending, REJECTED: declined, REVERSED: ${wrong === 'status' ? 'declined' : 'reversed'} } }`,
  ];
}

function definitionText(source: 'mysql' | 'postgres' | 'rest', wrong: Wrong, start: string): string {
  const zone = wrong === 'zone' ? 'Europe/London' : ZONE;
  const head = ['partner: vals', 'variant: igaming', 'source:'];
  const joined = source === 'rest' ? `{ from: joined, datetime: { format: sql, zone: ${zone} } }` : 'joined';
  const customers = ['    mapping:', '      passthrough: false', '      fields:', '        customer_id: player', `        signup_date: ${joined}`, `        last_modified_date: ${joined}`, '        affiliate_id: aff'];
  if (source === 'rest') {
    return [...head, '  type: rest', `  base_url: ${BASE}`, '  auth:', '    type: bearer', '    token: ${VALS_TOKEN}', 'streams:',
      '  customers:', '    path: /players', '    pagination: { type: page, per_page: 15 }', `    incremental: { cursor_field: last_modified_date, from_param: since, start: ${start}T00:00:00Z }`, ...customers,
      '  transactions:', '    path: /moves', '    pagination: { type: page, per_page: 15 }', `    incremental: { cursor_field: transaction_date, from_param: since, start: ${start}T00:00:00Z }`, ...mapping(wrong, true), ''].join('\n');
  }
  return [...head, '  type: db', `  client: ${source}`, '  url: ${VALS_URL}', `  timezone: ${zone}`, 'streams:',
    '  customers:', '    table: players', '    cursor_column: joined', '    tiebreak_column: player', ...customers,
    '  transactions:', '    table: moves', '    cursor_column: booked', '    tiebreak_column: tx_id', ...mapping(wrong, false), ''].join('\n');
}

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

for (const backend of STORES) {
  for (const source of ['mysql', 'postgres', 'rest'] as const) {
    const name = source === 'rest' ? 'a REST API' : source === 'mysql' ? 'a MariaDB replica' : 'a PostgreSQL replica';
    describe(`reconcile compares values read apart from the definition: ${name} into a ${backend.name} store`, function () {
      this.timeout(120_000);
      let dir: string;
      let t: TestStore;
      let db: TestDatabase | undefined;
      let now: number;
      let rows: Move[];
      let from: string;
      before(async () => {
        ZONE = source === 'mysql' && !(await zoneTables()) ? 'UTC' : 'Europe/Malta';
      });
      beforeEach(async () => {
        dir = mkdtempSync(join(tmpdir(), 'partner-sync-reconcile-values-'));
        t = await backend.create();
        if (source === 'rest') {
          now = Date.now();
          rows = moves(now);
          nock(BASE)
            .persist()
            .get('/players')
            .query(true)
            .reply(200, (uri) => ({ data: new URL(uri, BASE).searchParams.get('page') === '1' ? players(now) : [] }));
          nock(BASE)
            .persist()
            .get('/moves')
            .query(true)
            .reply((uri) => {
              const q = new URL(uri, BASE).searchParams;
              const page = Number(q.get('page') ?? '1');
              const size = Number(q.get('per_page'));
              return [200, { data: rows.slice((page - 1) * size, page * size).map((m, i) => ({ ...m, state: STATES[((page - 1) * size + i) % 4] })) }];
            });
        } else {
          const server = SERVER_DATABASES.find((b) => b.client === source);
          assert.ok(server, `${source} is not among TEST_SOURCE_DBS`);
          db = await server.create();
          // The source's clock: its own now, its moves written in Malta local time up to ten minutes before it.
          const [clock] = await db.rows<{ ms: string | number }>(source === 'mysql' ? 'SELECT UNIX_TIMESTAMP(NOW(6)) * 1000 AS ms' : 'SELECT extract(epoch FROM clock_timestamp()) * 1000 AS ms');
          now = Math.round(Number(clock?.ms));
          rows = moves(now);
          const stamp = source === 'mysql' ? 'DATETIME' : 'timestamp';
          await db.exec(`CREATE TABLE moves (tx_id INT PRIMARY KEY, player INT NOT NULL, kind VARCHAR(12) NOT NULL, amt_minor BIGINT NOT NULL, ccy CHAR(3) NOT NULL, booked ${stamp} NOT NULL, state VARCHAR(12) NOT NULL)`);
          const values = rows.map((m, i) => `(${m.tx_id}, ${m.player}, '${m.kind}', ${m.amt_minor}, '${m.ccy}', '${m.booked}', '${STATES[i % 4]}')`);
          await db.exec(`INSERT INTO moves VALUES ${values.join(', ')}`);
          await db.exec(`CREATE TABLE players (player INT PRIMARY KEY, aff VARCHAR(12) NOT NULL, joined ${stamp} NOT NULL)`);
          await db.exec(`INSERT INTO players VALUES ${players(now).map((p) => `(${p.player}, '${p.aff}', '${p.joined}')`).join(', ')}`);
        }
        from = day(now - 2 * 86_400_000);
      });
      afterEach(async () => {
        nock.cleanAll();
        await t.drop();
        await db?.drop();
        db = undefined;
        rmSync(dir, { recursive: true, force: true });
      });

      const env = () => ({ VALS_TOKEN: 'vals-token', VALS_URL: db?.url ?? '' });
      async function definition(wrong: Wrong): Promise<{ def: PartnerDefinition; file: string }> {
        mkdirSync(join(dir, 'partners'), { recursive: true });
        const file = join(dir, 'partners', 'vals.yaml');
        writeFileSync(file, definitionText(source, wrong, from));
        const loaded = await loadDefinition(file, env());
        assert.ok(loaded.definition, JSON.stringify(loaded.errors));
        return { def: loaded.definition, file };
      }
      const clock = () => new Date(now);
      async function synced(wrong: Wrong): Promise<PartnerDefinition> {
        const { def } = await definition(wrong);
        const results = await runPartner({ loader: loaderWith(t.store, []), clock, logger: silentLogger(), redact: noRedaction }, def, { kind: 'backfill', from, to: day(now) });
        // Read an hour off, the newest moves lie past the backfill's end: they are not loaded.
        if (wrong !== 'zone') assert.deepEqual(results.map((r) => [r.stream, r.status, r.counts.loaded]), [['customers', 'succeeded', PLAYERS], ['transactions', 'succeeded', N]], JSON.stringify(results));
        return def;
      }
      const run = async (wrong: Wrong) => {
        const def = await synced(wrong);
        const r = await reconcile({ store: t.store, clock, logger: silentLogger(), redact: noRedaction }, def, from, day(now), undefined, { sample: 25, seed: 11 });
        return { r, lines: reconciliationLines(r), text: reconciliationLines(r).join('\n') };
      };
      const key = /(9\d{3})/.source;

      it('the right definition reconciles clean, its currency, status and amounts read apart from it', async () => {
        const { r, text } = await run('none');
        assert.equal(r.ok, true, text);
        const values = r.values.streams.find((s) => s.entity === 'transactions');
        assert.ok(values, text);
        assert.deepEqual(values.fields.map((f) => [f.field, f.differing]).sort(), [['amount_currency', 0], ['currency', 0], ['status', 0], ['transaction_type', 0]], text);
        assert.equal(values.sampled, 25);
        assert.equal(values.read, N);
        assert.equal(values.groups?.computed, source === 'rest' ? 'pages' : 'sql', text);
        assert.equal(values.groups?.differing.length, 0, text);
        assert.match(text, /ok +transactions values: 25 of 40 record\(s\) sampled \(seed 11\)/);
      });

      it('a constant currency where the source has a ccy column: exit 1 naming currency and a key', async () => {
        const { r, text } = await run('currency');
        assert.equal(r.ok, false);
        assert.match(text, new RegExp(`DIFF transactions: currency differs in 25 of 25 sampled records, e.g. ${key}: source (EUR|SEK), store USD`), text);
        assert.match(text, /DIFF transactions \d{4}-\d{2}-\d{2} (EUR|SEK) \w+ \w+: source \d+ record/, text);
      });

      it('a status code mapped to the wrong word: exit 1 naming status and a key', async () => {
        const { r, text } = await run('status');
        assert.equal(r.ok, false);
        const found = r.values.streams.find((v) => v.entity === 'transactions')?.fields.find((f) => f.field === 'status');
        assert.ok(found && found.differing > 0 && found.differing < 25, text);
        assert.match(text, new RegExp(`DIFF transactions: status differs in ${found.differing} of 25 sampled records, e.g. ${key}: source reversed, store declined`), text);
      });

      it('amounts in minor units read as units: exit 1 naming amount_currency and a key', async () => {
        const { r, text } = await run("units");
        assert.equal(r.ok, false);
        const m = new RegExp(`DIFF transactions: amount_currency differs in 25 of 25 sampled records, e.g. ${key}: source ([\\d.]+), store (\\d+)`).exec(text);
        assert.ok(m, text);
        assert.equal(Number(m[2]) * 100, Number(m[3]), text);
      });

      it('local times read an hour off: exit 1 naming transaction_date and a key', async function () {
        if (ZONE !== 'Europe/Malta') this.skip();
        const { r, text } = await run("zone");
        assert.equal(r.ok, false);
        assert.match(text, new RegExp(`DIFF transactions: transaction_date of ${key} is \\S+, [45]\\d minutes after the source's clock \\(\\S+\\): its times are not in Europe/London`), text);
      });

      if (source === 'rest' || source === 'postgres') {
        it('the CLI: --sample and --seed draw the same records again, --json keeps its fields and adds values, exit 1', async () => {
          await synced('currency');
          const args = ['--config', dir, '--store', t.url, 'reconcile', 'vals', '--from', from, '--to', day(now), '--sample', '5', '--seed', '7', '--json'];
          process.env.VALS_TOKEN = 'vals-token';
          process.env.VALS_URL = db?.url ?? '';
          try {
            const first = await cli(args);
            const again = await cli(args);
            assert.equal(first.code, 1, first.err);
            const a = JSON.parse(first.out) as { ok: boolean; days: unknown[]; totals: unknown[]; no_total: unknown[]; values: { sample: number; seed: number; streams: { fields: { field: string; compared: number; differing: number; examples: { key: string }[] }[] }[] } };
            const b = JSON.parse(again.out) as typeof a;
            assert.equal(a.ok, false);
            for (const k of ['days', 'unmappable', 'totals', 'source_sql_skipped', 'no_total']) assert.ok(k in a, k);
            assert.deepEqual([a.values.sample, a.values.seed], [5, 7]);
            const tx = (x: typeof a) => x.values.streams.find((v) => (v as { entity?: string }).entity === 'transactions');
            const currency = tx(a)?.fields.find((f) => f.field === 'currency');
            assert.deepEqual([currency?.compared, currency?.differing], [5, 5]);
            assert.deepEqual(tx(b)?.fields.find((f) => f.field === 'currency')?.examples, currency?.examples);
            const bad = await cli([...args.slice(0, -5), '--sample', 'many']);
            assert.equal(bad.code, 2);
            assert.match(bad.err, /--sample must be a whole number ≥ 0, got "NaN"/);
          } finally {
            delete process.env.VALS_TOKEN;
            delete process.env.VALS_URL;
          }
        });
      }
    });
  }
}

let tables: boolean | undefined;
/** Whether the local MariaDB has its time-zone tables (a named source.timezone needs them until the connector converts by itself). */
async function zoneTables(): Promise<boolean> {
  if (tables !== undefined) return tables;
  const server = SERVER_DATABASES.find((b) => b.client === 'mysql');
  if (!server) return (tables = false);
  const db = await server.create();
  try {
    const [row] = await db.rows<{ n: number | string }>('SELECT COUNT(*) AS n FROM mysql.time_zone_name');
    tables = Number(row?.n) > 0;
  } finally {
    await db.drop();
  }
  return tables;
}
