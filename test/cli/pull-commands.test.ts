/**
 * The pull commands as a user runs them: `partner-sync` as a subprocess, against the in-process
 * sandbox partner, with a copy of the example definition in a temporary --config folder and a
 * fresh SQLite store. Exit codes and --json shapes are the stable interface (design.md).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { openStore } from '../../src/store/store.js';
import type { Entity, SpecRecord } from '../../src/types.js';
import { runCli, type CliResult } from '../support/cli.js';
import { exampleCliConfig, type CliConfig } from '../support/cli-config.js';
import { SANDBOX_SECRET, byKey, storedByKey } from '../support/sandbox.js';

const PARTNER = 'sandbox-casino';
const STREAMS: Entity[] = ['customers', 'transactions', 'activity'];

interface Counts { pulled: number; valid: number; rejected: number; loaded: number; waiting: number; released: number }
interface StreamResult { stream: Entity; runId: string; kind: string; status: string; windows: string; counts: Counts; watermark?: string; error?: string }
interface RunJson { partner: string; kind: string; streams: StreamResult[] }
interface CheckJson { ok: boolean; definition_errors: { file: string; path: string; line?: number; message: string }[]; streams: { stream: Entity; ok: boolean; records: number; detail: string }[] }
interface StatusRow { partner: string; stream: Entity; last_run: { id: string; kind: string; status: string } | null; watermark: string | null; freshness: { state: string } | null; rejects_open: number; waiting: number }
interface StatusJson { now: string; streams: StatusRow[] }
interface RejectJson { id: string; stream: Entity; origin: string; errors: { field: string; rule: string; message: string }[]; payload: unknown }
interface ReplayJson { partner: string; replay: { entity: Entity; replayed: number; stillRejected: number; counts: Counts }[] }

const statuses = (out: RunJson) => out.streams.map((s) => [s.stream, s.status]);

describe('pull commands as a user runs them (CLI subprocess against the sandbox partner)', function () {
  this.timeout(60_000);
  let sandbox: Sandbox;
  let config: CliConfig;
  let storeDir: string;
  let env: Record<string, string>;
  /** The last CLI result, for its stderr. */
  let last: CliResult;

  beforeEach(async () => {
    sandbox = await startSandbox({ port: 0, seed: 11, customers: 30, clients: [{ client_id: 'sandbox-client', client_secret: SANDBOX_SECRET }] });
    // First runs start at the beginning of the partner's data, so a run pulls all of it.
    config = exampleCliConfig(PARTNER, sandbox.url, `${sandbox.data.from}T00:00:00Z`);
    storeDir = mkdtempSync(join(tmpdir(), 'partner-sync-pull-cli-'));
    // Debug logging: every log line the commands write must stay off stdout and free of secrets.
    env = { SANDBOX_CLIENT_SECRET: SANDBOX_SECRET, STORE_URL: `sqlite:${join(storeDir, 'store.sqlite')}`, LOG_LEVEL: 'debug' };
  });
  afterEach(async () => {
    await sandbox.close();
    config.cleanup();
    rmSync(storeDir, { recursive: true, force: true });
  });

  /** Runs the CLI with this test's config and store; the client secret must never be printed. */
  async function cli(args: string[], extraEnv: Record<string, string> = {}): Promise<CliResult> {
    const r = (last = await runCli(['--config', config.dir, ...args], { env: { ...env, ...extraEnv } }));
    const secret = extraEnv.SANDBOX_CLIENT_SECRET ?? SANDBOX_SECRET;
    assert.ok(!r.stdout.includes(secret) && !r.stderr.includes(secret), `partner-sync ${args.join(' ')} printed the client secret`);
    return r;
  }

  /** `args --json`: the exit code expected, and exactly one JSON document on stdout. */
  async function cliJson<T>(args: string[], code: number, extraEnv: Record<string, string> = {}): Promise<T> {
    const r = await cli([...args, '--json'], extraEnv);
    assert.equal(r.code, code, `partner-sync ${args.join(' ')} --json exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    assert.equal(r.stdout.trimEnd().split('\n').length, 1, `one JSON document on stdout, got:\n${r.stdout}`);
    return JSON.parse(r.stdout) as T;
  }

  /** What the store holds per stream (one connection at a time: better-sqlite3 waits on locks synchronously). */
  async function snapshot(entities: Entity[] = STREAMS): Promise<Map<string, SpecRecord>[]> {
    const store = await openStore({ url: env.STORE_URL });
    try {
      const out: Map<string, SpecRecord>[] = [];
      for (const entity of entities) out.push(await storedByKey(store, PARTNER, 'igaming', entity));
      return out;
    } finally {
      await store.close();
    }
  }
  const stored = async (entity: Entity) => (await snapshot([entity]))[0]!;
  const partnerHas = (entity: Exclude<Entity, 'activity'>) =>
    byKey('igaming', entity, entity === 'customers' ? sandbox.data.customers('igaming') : sandbox.data.transactions('igaming'));
  const status = async () => new Map((await cliJson<StatusJson>(['status'], 0)).streams.map((s) => [s.stream, s]));

  describe('check', () => {
    it('exits 0 with every stream ok: auth, one page read, records valid after mapping', async () => {
      const out = await cliJson<CheckJson>(['check'], 0);
      assert.equal(out.ok, true);
      assert.deepEqual(out.definition_errors, []);
      assert.deepEqual(out.streams.map((s) => [s.stream, s.ok]), [['customers', true], ['transactions', true], ['activity', true]]);
      for (const s of out.streams) assert.match(s.detail, /^auth ok/);
      assert.ok(out.streams.find((s) => s.stream === 'activity')!.records > 0, 'yesterday has activity at the sandbox');
    });

    it('exits 1 with a wrong client secret, every stream saying the token was refused, the secret printed nowhere', async () => {
      const wrong = { SANDBOX_CLIENT_SECRET: 'wrong-secret-Zk81Pq0' };
      const out = await cliJson<CheckJson>(['check'], 1, wrong);
      assert.equal(out.ok, false);
      assert.deepEqual(out.streams.map((s) => [s.stream, s.ok]), [['customers', false], ['transactions', false], ['activity', false]]);
      for (const s of out.streams) assert.match(s.detail, /token request refused: HTTP 401.*(wrong client secret|client_secret)/, s.detail);
      const text = await cli(['check'], wrong);
      assert.equal(text.code, 1);
      assert.equal(text.stdout.match(/^FAIL sandbox-casino (customers|transactions|activity): .*HTTP 401/gm)?.length, 3, text.stdout);
    });

    it('exits 2 on a definition with several errors, printing every one with file, path and reason', async () => {
      const literal = 'literal-Secret-4242';
      config.write((y) => y
        .replace('per_page: 500', 'per_page: 1000') // the first is the customers stream's
        .replace('client_secret: ${SANDBOX_CLIENT_SECRET}', `client_secret: ${literal}`)
        .concat('\nschedules: every minute\n'));
      const text = await cli(['check']);
      assert.equal(text.code, 2, text.stderr);
      const fails = text.stdout.split('\n').filter((l) => l.startsWith('FAIL '));
      assert.equal(fails.length, 3, text.stdout);
      assert.match(text.stdout, /^FAIL \S*sandbox-casino\.yaml: streams\.customers\.pagination\.per_page \(line \d+\): must be <= 500.*got 1000$/m);
      assert.match(text.stdout, /^FAIL \S*sandbox-casino\.yaml: source\.auth\.client_secret \(line \d+\): .*never a literal$/m);
      assert.match(text.stdout, /^FAIL \S*sandbox-casino\.yaml: schedules \(line \d+\): unknown key "schedules"/m);
      assert.ok(!text.stdout.includes(literal) && !text.stderr.includes(literal), 'the literal secret is not echoed');
      const out = await cliJson<CheckJson>(['check'], 2);
      assert.deepEqual(out.definition_errors.map((e) => e.path).sort(), ['schedules', 'source.auth.client_secret', 'streams.customers.pagination.per_page']);
      assert.deepEqual(out.streams, []);
      // The other commands refuse the partner the same way.
      const run = await cli(['run', PARTNER]);
      assert.equal(run.code, 2);
      assert.match(run.stderr, /the definition of partner sandbox-casino is invalid:/);
      for (const path of ['streams.customers.pagination.per_page', 'source.auth.client_secret', 'schedules']) {
        assert.match(run.stderr, new RegExp(`^  \\S*sandbox-casino\\.yaml: ${path.replaceAll('.', '\\.')} \\(line \\d+\\): `, 'm'));
      }
    });
  });

  describe('run', () => {
    it('exits 0 with three streams succeeded, counts that add up and watermarks; the store holds exactly the partner\'s records', async () => {
      const before = new Date().toISOString();
      const out = await cliJson<RunJson>(['run', PARTNER], 0);
      assert.equal(out.partner, PARTNER);
      assert.equal(out.kind, 'run');
      assert.match(last.stderr, /run started/, 'the log (debug level) goes to stderr');
      assert.deepEqual(statuses(out), [['customers', 'succeeded'], ['transactions', 'succeeded'], ['activity', 'succeeded']]);
      for (const s of out.streams) {
        assert.equal(s.counts.pulled, s.counts.loaded + s.counts.rejected + s.counts.waiting, `${s.stream}: ${JSON.stringify(s.counts)}`);
        assert.ok(s.counts.pulled > 0, `${s.stream} pulled something`);
      }
      const [customers, transactions, activity] = out.streams as [StreamResult, StreamResult, StreamResult];
      assert.equal(customers.counts.pulled, 30);
      assert.equal(transactions.counts.pulled, sandbox.data.transactions('igaming').length);
      assert.ok(customers.watermark! >= before && transactions.watermark! >= before, `watermarks are the run's upper bounds: ${customers.watermark}`);
      assert.equal(activity.watermark, sandbox.data.to, 'the last closed day');
      const lastDays = sandbox.data.activityDates('igaming').slice(-3); // the last closed day and late_days 2 before it
      assert.equal(lastDays.at(-1), sandbox.data.to);
      assert.equal(activity.counts.pulled, lastDays.flatMap((d) => sandbox.data.activity('igaming', d)).length);
      assert.deepEqual(await stored('customers'), partnerHas('customers'));
      assert.deepEqual(await stored('transactions'), partnerHas('transactions'));
    });

    it('--stream customers runs that stream only', async () => {
      const out = await cliJson<RunJson>(['run', PARTNER, '--stream', 'customers'], 0);
      assert.deepEqual(statuses(out), [['customers', 'succeeded']]);
      assert.equal((await stored('customers')).size, 30);
      assert.equal((await stored('transactions')).size, 0);
      const rows = await status();
      assert.equal(rows.get('customers')?.last_run?.id, out.streams[0]?.runId);
      assert.deepEqual([rows.get('transactions')?.last_run, rows.get('transactions')?.watermark], [null, null]);
    });

    it('exits 2 for an unknown partner, naming the known ones', async () => {
      const r = await cli(['run', 'nobody']);
      assert.equal(r.code, 2);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /no connector definition for partner nobody .*\(defined: sandbox-casino\)/);
    });

    it('exits 1 when a stream fails; the other streams still succeed and the text names the failure', async () => {
      config.write((y) => y.replace('path: /api/v1/igaming/transactions', 'path: /api/v1/igaming/no-such-stream'));
      const out = await cliJson<RunJson>(['run', PARTNER], 1);
      assert.deepEqual(statuses(out), [['customers', 'succeeded'], ['transactions', 'failed'], ['activity', 'succeeded']]);
      const failed = out.streams[1]!;
      assert.match(failed.error ?? '', /404/);
      assert.equal(failed.watermark, undefined, 'a failed stream has no watermark yet');
      assert.equal((await status()).get('transactions')?.watermark, null);
      const text = await cli(['run', PARTNER]);
      assert.equal(text.code, 1);
      assert.match(text.stdout, /^transactions: failed: .*no-such-stream.*404/m);
      assert.match(text.stdout, /^customers\s+succeeded\s/m);
    });
  });

  describe('status', () => {
    it('after a run: last run, watermark and freshness ok per stream; the text is a table', async () => {
      const empty = await status();
      assert.deepEqual(STREAMS.map((s) => [empty.get(s)?.last_run, empty.get(s)?.watermark]), [[null, null], [null, null], [null, null]]);
      const run = await cliJson<RunJson>(['run', PARTNER], 0);
      const rows = await status();
      for (const r of run.streams) {
        const row = rows.get(r.stream);
        assert.deepEqual([row?.last_run?.id, row?.last_run?.kind, row?.last_run?.status], [r.runId, 'run', 'succeeded'], r.stream);
        assert.equal(row?.watermark, r.watermark, r.stream);
        assert.equal(row?.freshness?.state, 'ok', r.stream);
        assert.deepEqual([row?.rejects_open, row?.waiting], [0, 0]);
      }
      const text = await cli(['status']);
      assert.equal(text.code, 0);
      const lines = text.stdout.trimEnd().split('\n');
      assert.match(lines[0]!, /^PARTNER\s+STREAM\s+LAST RUN\s+RESULT\s+WATERMARK\s+FRESHNESS\s+REJECTS\s+WAITING$/);
      assert.deepEqual(lines.slice(1).map((l) => l.split(/\s+/).slice(0, 2)), STREAMS.map((s) => [PARTNER, s]));
      assert.match(lines[3]!, new RegExp(`succeeded\\s+${sandbox.data.to}\\s+ok: `));
    });
  });

  describe('backfill', () => {
    const addDays = (day: string, n: number) => new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

    it('exits 0 over closed days; twice is the same as once; incremental state untouched', async () => {
      const from = addDays(sandbox.data.from, 5);
      const to = addDays(sandbox.data.from, 9);
      const args = ['backfill', PARTNER, '--from', from, '--to', to];
      const first = await cliJson<RunJson & { from: string; to: string }>(args, 0);
      assert.deepEqual([first.kind, first.from, first.to], ['backfill', from, to]);
      assert.deepEqual(statuses(first), [['customers', 'succeeded'], ['transactions', 'succeeded'], ['activity', 'succeeded']]);
      for (const s of first.streams) assert.equal(s.counts.pulled, s.counts.loaded + s.counts.rejected + s.counts.waiting, s.stream);
      const days = sandbox.data.activityDates('igaming').filter((d) => d >= from && d <= to);
      assert.equal(first.streams[2]!.counts.pulled, days.flatMap((d) => sandbox.data.activity('igaming', d)).length);
      const inRange = (t: unknown) => typeof t === 'string' && Date.parse(t) >= Date.parse(`${from}T00:00:00Z`) && Date.parse(t) < Date.parse(`${addDays(to, 1)}T00:00:00Z`);
      const expected = byKey('igaming', 'customers', sandbox.data.customers('igaming').filter((c) => inRange(c.last_modified_date)));
      assert.ok(expected.size > 0 && expected.size < 30, `a range holding some customers (${expected.size})`);
      assert.deepEqual(await stored('customers'), expected);
      const once = await snapshot();
      const waitingOnce = [...(await status()).values()].map((s) => s.waiting);

      const second = await cliJson<RunJson>(args, 0);
      assert.deepEqual(second.streams.map((s) => s.counts.pulled), first.streams.map((s) => s.counts.pulled));
      assert.deepEqual(await snapshot(), once);
      const rows = await status();
      assert.deepEqual([...rows.values()].map((s) => s.waiting), waitingOnce);
      assert.deepEqual(STREAMS.map((s) => [rows.get(s)?.last_run?.kind, rows.get(s)?.watermark]), STREAMS.map(() => ['backfill', null]));
    });

    it('a stored day the partner now answers empty for is not replaced (exit 1, naming the day); --allow-shrink replaces it', async () => {
      await cliJson<RunJson>(['run', PARTNER, '--stream', 'customers'], 0);
      const day = addDays(sandbox.data.from, 6);
      const args = ['backfill', PARTNER, '--from', day, '--to', day, '--stream', 'activity'];
      await cliJson<RunJson>(args, 0);
      const ofDay = async () => [...(await stored('activity')).keys()].filter((k) => k.startsWith(day));
      const rows = await ofDay();
      assert.equal(rows.length, sandbox.data.activity('igaming', day).length);
      assert.ok(rows.length > 0);
      for (const row of sandbox.data.activity('igaming', day)) {
        sandbox.data.deleteActivity('igaming', { date: day, customer_id: row.customer_id as string, game_type: row.game_type as string, currency: row.currency as string });
      }
      const refused = await cliJson<RunJson>(args, 1);
      assert.deepEqual(statuses(refused), [['activity', 'failed']]);
      assert.match(refused.streams[0]?.error ?? '', new RegExp(`^day replacement refused, nothing replaced: ${day}: ${rows.length} rows stored, 0 received: the day would become empty\\.`));
      assert.deepEqual(await ofDay(), rows);
      const text = await cli(args);
      assert.equal(text.code, 1);
      assert.match(text.stdout + text.stderr, /the day would become empty/);
      const accepted = await cliJson<RunJson>([...args, '--allow-shrink'], 0);
      assert.deepEqual(statuses(accepted), [['activity', 'succeeded']]);
      assert.deepEqual(await ofDay(), []);
    });

    it('exits 2 for --to today, a date that does not exist, or --from after --to', async () => {
      const today = new Date().toISOString().slice(0, 10);
      const cases: [string, string, RegExp][] = [
        [sandbox.data.from, today, /--to \S+ is not a closed day/],
        [sandbox.data.from, '2026-02-30', /--to must be a calendar date YYYY-MM-DD, got "2026-02-30"/],
        ['yesterday', sandbox.data.to, /--from must be a calendar date/],
        [sandbox.data.to, sandbox.data.from, /--from \S+ is after --to/],
      ];
      for (const [from, to, message] of cases) {
        const r = await cli(['backfill', PARTNER, '--from', from, '--to', to]);
        assert.equal(r.code, 2, `--from ${from} --to ${to}: ${r.stderr}`);
        assert.match(r.stderr, message);
      }
      assert.equal((await stored('customers')).size, 0, 'nothing was pulled');
    });
  });

  describe('rejects', () => {
    it('an invalid record is rejected by run, listed with its reason and raw payload, and loaded by --replay after the mapping is fixed', async () => {
      const bad = sandbox.data.upsertCustomer('igaming', { customer_id: 'bad-1', signup_date: '2026-13-01T00:00:00Z', affiliate_id: 'aff-101' }, new Date(Date.now() - 60_000));
      const run = await cliJson<RunJson>(['run', PARTNER, '--stream', 'customers'], 0);
      assert.deepEqual([run.streams[0]?.counts.pulled, run.streams[0]?.counts.loaded, run.streams[0]?.counts.rejected], [31, 30, 1]);
      assert.deepEqual((run.streams[0] as { rejectedBy?: Record<string, number> }).rejectedBy, { 'signup_date format': 1 });

      const listed = await cliJson<{ partner: string; rejects: RejectJson[] }>(['rejects', PARTNER], 0);
      assert.equal(listed.rejects.length, 1);
      const reject = listed.rejects[0]!;
      assert.deepEqual([reject.stream, reject.origin], ['customers', 'source']);
      assert.deepEqual(reject.errors.map((e) => [e.field, e.rule]), [['signup_date', 'format']]);
      const payload = typeof reject.payload === 'string' ? JSON.parse(reject.payload) : reject.payload;
      assert.deepEqual(payload, bad, 'the partner\'s record as received');
      const text = await cli(['rejects', PARTNER]);
      assert.match(text.stdout, /^\S+\s+customers\s+.*signup_date\s+format\s/m);
      assert.match(text.stdout, /1 open rejects; fix the cause, then: partner-sync rejects sandbox-casino --replay/);
      assert.equal((await status()).get('customers')?.rejects_open, 1);

      // Replayed before the fix: still rejected, still open.
      const early = await cliJson<ReplayJson>(['rejects', PARTNER, '--replay'], 0);
      assert.deepEqual(early.replay.map((r) => [r.entity, r.replayed, r.stillRejected]), [['customers', 0, 1]]);

      // The fix: the mapping now sets signup_date; replay re-maps the partner's record with it.
      config.write((y) => y.replace(/fields: \{\}/, 'fields:\n        signup_date: { const: "2026-01-01T00:00:00Z" }'));
      const replay = await cliJson<ReplayJson>(['rejects', PARTNER, '--replay'], 0);
      assert.deepEqual(replay.replay.map((r) => [r.entity, r.replayed, r.stillRejected, r.counts.loaded]), [['customers', 1, 0, 1]]);
      const customers = await stored('customers');
      assert.equal(customers.size, 31);
      assert.deepEqual(customers.get('bad-1'), byKey('igaming', 'customers', [{ ...bad, signup_date: '2026-01-01T00:00:00Z' }]).get('bad-1'));
      assert.deepEqual((await cliJson<{ rejects: RejectJson[] }>(['rejects', PARTNER], 0)).rejects, []);
      assert.equal((await status()).get('customers')?.rejects_open, 0);
      assert.match((await cli(['rejects', PARTNER])).stdout, /^sandbox-casino: no open rejects$/m);
    });
  });
});
