/**
 * Erasure of one person (docs/personal-data.md), as a user runs it: a generated month of 1,000
 * customers with labelled fraud patterns imported with the shipped plans and fraud rules, a postback
 * that keeps personal fields in its outbox, then `customers erase` of three customers (one in a
 * duplicate-identity flag, two with first deposits). Afterwards none of their values is in the
 * store's bytes (the SQLite file after the erasure's checkpoint; a pg_dump), the report, the ledger
 * and the flags' decisions are what they were, `commissions recompute` agrees, and the same
 * customers sent again load without their personal fields; a purge with every default years later
 * removes the delivered events and old runs and changes none of those figures. A SIGKILL in the middle of an erasure of
 * many leaves each customer erased whole or not at all; the rerun ends where one run would.
 */
import { strict as assert } from 'node:assert';
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../src/paths.js';
import { createSandboxData } from '../../src/sandbox/data.js';
import type { SpecRecord } from '../../src/types.js';
import { runCli } from '../support/cli.js';
import { fixedClock, PG_URL, STORES, type TestStore } from '../support/stores.js';
import { cli, DATA_CLOCK, ndjson, PARTNER, ratesCsv, shippedConfig } from '../volume/support.js';

const MONTH = { seed: 7, customers: 1000, from: '2026-10-01', to: '2026-10-31', fraudPatterns: 2 } as const;
const data = createSandboxData({ ...MONTH, clock: DATA_CLOCK });

/** Everything the store holds, as bytes: the SQLite file and its WAL, or a pg_dump of the test's schema. */
function storeBytes(t: TestStore): string {
  if (t.url.startsWith('sqlite:')) {
    const file = t.url.slice('sqlite:'.length);
    const wal = (() => { try { return readFileSync(`${file}-wal`); } catch { return Buffer.alloc(0); } })();
    return (readFileSync(file).toString('latin1') + wal.toString('latin1')).toLowerCase();
  }
  const schema = /search_path=(\w+)/.exec(decodeURIComponent(t.url))?.[1];
  assert.ok(schema, `no schema in ${t.url}`);
  return execFileSync('pg_dump', ['--schema', schema, PG_URL], { maxBuffer: 1 << 30 }).toString('latin1').toLowerCase();
}

const POSTBACK_KEY = 'e'.repeat(64);

for (const backend of STORES) {
  describe(`customers erase (${backend.name})`, function () {
    this.timeout(600_000);

    it("leaves none of three customers' values in the store's bytes, the money and the flags' decisions as they were, and later loads without them", async () => {
      const t = await backend.create();
      const config = shippedConfig();
      try {
        const customers = data.customers('igaming');
        const transactions = data.transactions('igaming').map(({ updated_at: _changed, ...tx }) => tx);
        const dup = data.patterns.find((p) => p.rule === 'duplicate_identity' && p.variant === 'igaming');
        assert.ok(dup, 'the month has a duplicate-identity pattern');
        const depositors = [...new Set(transactions.filter((x) => x.transaction_type === 'deposit' && x.status === 'approved').map((x) => String(x.customer_id)))];
        const erased = [dup.customers[0]!, ...depositors.filter((c) => !dup.customers.includes(c)).slice(0, 2)];
        const byId = new Map(customers.map((c) => [String(c.customer_id), c]));
        // The values only these three hold (a first name is also other people's).
        const others = JSON.stringify(customers.filter((c) => !erased.includes(String(c.customer_id)))).toLowerCase();
        const values = erased.flatMap((id) => ['email', 'first_name', 'last_name'].map((f) => byId.get(id)?.[f]))
          .filter((v): v is string => typeof v === 'string' && v.length >= 4 && !others.includes(JSON.stringify(v).toLowerCase()));
        assert.ok(values.filter((v) => v.includes('@')).length >= 2, `e-mails to look for: ${JSON.stringify(values.length)} values`);

        const env = { POSTBACK_SECRET_KEY: POSTBACK_KEY, LOG_LEVEL: 'error' };
        const affiliate = String(byId.get(erased[1]!)?.affiliate_id);
        const added = await runCli(['--config', config.dir, '--store', t.url, 'postbacks', 'add', '--affiliate', affiliate, '--events', 'registration,ftd', '--include-personal', '--allow-private',
          '--url', 'http://127.0.0.1:9/pb?email={email}&first={first_name}&last={last_name}&c={customer_id}'], { env });
        assert.equal(added.code, 0, added.stderr);
        await cli(config.dir, t.url, ['fx', 'import', config.file('rates.csv', ratesCsv(MONTH.from, MONTH.to))]);
        const files = ([['customers', customers], ['transactions', transactions], ['activity', data.activity('igaming')]] as const)
          .map(([entity, records]) => [entity, config.file(`${entity}.ndjson`, ndjson(records as SpecRecord[]))] as const);
        await cli(config.dir, t.url, ['import', PARTNER, '--variant', 'igaming', ...files.flatMap(([entity, file]) => [`--${entity}`, file])]);

        const outbox = (await t.store.knex('postback_events').whereIn('customer_id', erased).count({ n: '*' }))[0] as { n: number | string };
        assert.ok(Number(outbox.n) > 0, 'the postback kept events of an erased customer');
        const before = storeBytes(t);
        assert.deepEqual(values.filter((v) => !before.includes(v.toLowerCase())), [], 'every value is in the store before');

        const snapshot = async () => ({
          report: await cli(config.dir, t.url, ['report', 'affiliates', '--partner', PARTNER, '--json']),
          ledger: await cli(config.dir, t.url, ['commissions', '--lines', '--partner', PARTNER, '--json']),
          flags: (JSON.parse(await cli(config.dir, t.url, ['fraud', 'list', '--partner', PARTNER, '--json'])) as { flags: { id: number; rule: string; status: string; customers: string[] }[] }).flags
            .map((f) => [f.id, f.rule, f.status, f.customers]),
        });
        const was = await snapshot();
        assert.ok(was.flags.some(([, rule, , ids]) => rule === 'duplicate_identity' && (ids as string[]).includes(erased[0]!)), 'the duplicate-identity flag names the first customer');

        const result = JSON.parse(await cli(config.dir, t.url, ['customers', 'erase', PARTNER, ...erased, '--json'])) as { erased: { customer_id: string; found: boolean; tables: Record<string, number> }[] };
        assert.deepEqual(result.erased.map((e) => [e.customer_id, e.found, e.tables.customers]), erased.map((id) => [id, true, 1]));
        assert.ok(result.erased[0]!.tables.fraud_flags! >= 1 && result.erased[0]!.tables.fraud_identities! >= 1, JSON.stringify(result.erased[0]));
        assert.ok(result.erased.some((e) => e.tables.postback_events! > 0), JSON.stringify(result.erased));

        const after = storeBytes(t);
        assert.deepEqual(values.filter((v) => after.includes(v.toLowerCase())), [], 'no erased value is left in the bytes');
        assert.deepEqual(await snapshot(), was, 'report, ledger and flag decisions unchanged');
        const recompute = JSON.parse(await cli(config.dir, t.url, ['commissions', 'recompute', '--partner', PARTNER, '--json'])) as { agree: boolean };
        assert.equal(recompute.agree, true);
        const flag = (await t.store.knex('fraud_flags as f').join('fraud_flag_customers as fc', 'fc.flag_id', 'f.id').where({ 'fc.customer_id': erased[0], 'f.rule': 'duplicate_identity' }).first('f.evidence')) as { evidence: string };
        assert.equal((JSON.parse(flag.evidence) as { evidence_erased?: boolean }).evidence_erased, true);

        const audit = JSON.parse(await cli(config.dir, t.url, ['customers', 'erasures', PARTNER, '--json'])) as { customer_id: string; via: string }[];
        assert.deepEqual(audit.map((a) => [a.customer_id, a.via]), erased.map((id) => [id, 'cli']));
        assert.deepEqual(values.filter((v) => JSON.stringify(audit).toLowerCase().includes(v.toLowerCase())), []);

        // The partner sends them again, personal fields and all: stored without them, and the import says so.
        const again = config.file('again.ndjson', ndjson(erased.map((id) => byId.get(id)!)));
        const loaded = JSON.parse(await cli(config.dir, t.url, ['import', PARTNER, '--variant', 'igaming', '--entity', 'customers', '--json', again])) as { loaded: number; erased: number };
        assert.deepEqual([loaded.loaded, loaded.erased], [3, 3]);
        const rows = await t.store.knex('customers').where('partner_id', PARTNER).whereIn('customer_id', erased).select('email', 'first_name', 'last_name');
        assert.deepEqual(rows, erased.map(() => ({ email: null, first_name: null, last_name: null })));

        // Retention, every default, years later: the delivered events and the old runs go; the money and the report stay.
        const events = Number(((await t.store.knex('postback_events').count({ n: '*' }))[0] as { n: number | string }).n);
        await t.store.knex('postback_events').update({ state: 'delivered', delivered_at: t.store.now() });
        const later = fixedClock('2029-01-01T12:00:00.000Z');
        const dry = await runCli(['--config', config.dir, '--store', t.url, 'purge', '--dry-run', '--json'], { env, clock: later });
        assert.equal(dry.code, 0, dry.stderr);
        assert.equal(Number(((await t.store.knex('postback_events').count({ n: '*' }))[0] as { n: number | string }).n), events, 'a dry run removes nothing');
        const purged = await runCli(['--config', config.dir, '--store', t.url, 'purge', '--json'], { env, clock: later });
        assert.equal(purged.code, 0, purged.stderr);
        const result2 = JSON.parse(purged.stdout) as { results: { kind: string; due: number; purged: number }[] };
        assert.deepEqual(result2.results.find((r) => r.kind === 'delivered_postback_events'), { kind: 'delivered_postback_events', due: events, purged: events, before: '2028-12-02T00:00:00.000Z' });
        assert.ok(result2.results.find((r) => r.kind === 'run_history')!.purged > 0, 'old runs go');
        assert.deepEqual(await snapshot(), was, 'report, ledger and flags unchanged by the purge');
        const after2 = JSON.parse(await cli(config.dir, t.url, ['commissions', 'recompute', '--partner', PARTNER, '--json'])) as { agree: boolean };
        assert.equal(after2.agree, true);
      } finally {
        config.cleanup();
        await t.drop();
      }
    });

    it('SIGKILL in the middle of erasing 300 customers: each is erased whole or not at all, and the rerun completes them', async () => {
      const t = await backend.create();
      const config = shippedConfig();
      try {
        const customers = data.customers('igaming').slice(0, 300);
        await cli(config.dir, t.url, ['import', PARTNER, '--variant', 'igaming', '--entity', 'customers', config.file('c.ndjson', ndjson(customers))]);
        const ids = customers.map((c) => String(c.customer_id));
        const hadEmail = new Set(customers.filter((c) => typeof c.email === 'string').map((c) => String(c.customer_id)));
        const file = config.file('ids.txt', `# erasure requests\n${ids.join('\n')}\n`);
        const child = spawn(process.execPath, [join(packageRoot(), 'bin', 'partner-sync.js'), '--config', config.dir, '--store', t.url, 'customers', 'erase', PARTNER, '--file', file], { stdio: 'ignore' });
        const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
        for (let i = 0; i < 600; i++) {
          const [row] = (await t.store.knex('erasures').count({ n: '*' })) as { n: number | string }[];
          if (Number(row?.n) >= 5) break;
          await new Promise((r) => setTimeout(r, 20));
        }
        child.kill('SIGKILL');
        await exited;

        const state = async () => {
          const done = new Set(((await t.store.knex('erasures').pluck('customer_id')) as string[]));
          const rows = (await t.store.knex('customers').whereIn('customer_id', ids).select('customer_id', 'email')) as { customer_id: string; email: string | null }[];
          return { done, half: rows.filter((r) => hadEmail.has(r.customer_id) && (r.email === null) !== done.has(r.customer_id)).map((r) => r.customer_id) };
        };
        const killed = await state();
        assert.ok(killed.done.size >= 5 && killed.done.size < ids.length, `killed after ${killed.done.size} of ${ids.length}`);
        assert.deepEqual(killed.half, [], 'no customer half-erased');

        await cli(config.dir, t.url, ['customers', 'erase', PARTNER, '--file', file]);
        const rerun = await state();
        assert.equal(rerun.done.size, ids.length);
        assert.deepEqual(rerun.half, []);
        const left = await t.store.knex('customers').whereIn('customer_id', ids).whereNotNull('email').count({ n: '*' });
        assert.equal(Number((left[0] as { n: number | string }).n), 0);
      } finally {
        config.cleanup();
        await t.drop();
      }
    });
  });
}
