/**
 * REST code maps from pages spread over the partner's history (src/onboarding/discover-history.ts),
 * on real local HTTP servers whose pages hold 7 records, at an injected clock (no test depends on
 * the day it runs): a list whose newest pages are deposits only and whose older windows hold the
 * other kinds (the draft maps every kind, names the one it cannot map, and `check` fails on it
 * until it is mapped); page numbers with a total (pages spread to the last); offsets without a
 * total (the end found by jumping ahead and halving back); a window answering 500, a set still
 * growing at the oldest window and token pages without a date filter, which keep a TODO saying so
 * instead of a silent map.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_CLOCK_NOW, TEST_CLOCK_SWITCH } from '../../src/kernel/clock.js';
import { startRestPartner, type RestEndpoint, type RestPartnerOptions } from './fixtures/rest-partner.js';
import { cli, confirmTodos } from './support.js';

const NOW = Date.parse('2026-06-15T12:00:00Z');
const DAY = 86_400_000;
const iso = (ms: number): string => new Date(ms).toISOString();
const PATH = '/v1/transactions';
const SECRET = 'history-secret';

type Row = Record<string, unknown>;

/** A transaction `daysBack` days before the clock, of the partner's own kind code. */
function row(n: number, daysBack: number, kind: string): Row {
  const at = NOW - daysBack * DAY;
  return { transaction_id: `T${n}`, customer_id: `C${n % 9}`, kind, amount_currency: 10.25 + (n % 7), currency: 'EUR', transaction_date: iso(at - 60_000), status: 'approved', updated_at: iso(at) };
}

/** Rows at days back, `count` of them spaced an hour apart from `from`, their kinds in turn. */
function rows(start: number, from: number, count: number, kinds: readonly string[]): Row[] {
  return Array.from({ length: count }, (_, i) => row(start + i, from + i / 24, kinds[i % kinds.length] as string));
}

/**
 * The issue's partner: its 25 newest transactions are deposits (every page discover reads first);
 * withdrawals 10 days back, refunds and bonuses a month back and older, all kinds again at 100
 * days; a refund and a bonus inside check's windows 30 and 90 days back too.
 */
function deposits(oldest: readonly string[] = ['DEP', 'WDR', 'BON', 'REFUND']): Row[] {
  return [
    ...rows(1, 0.1, 25, ['DEP']),
    ...rows(100, 10, 7, ['WDR', 'DEP']),
    ...rows(200, 29.3, 2, ['REFUND', 'BON']),
    ...rows(300, 31, 7, ['REFUND', 'BON', 'WDR']),
    ...rows(400, 89.3, 1, ['REFUND']),
    ...rows(500, 100, 7, oldest),
  ];
}

/** Filtered by updated_since/updated_until on updated_at, newest first. */
const windowed = (records: Row[], fails?: RestEndpoint['fails']): RestEndpoint => ({
  path: PATH,
  records,
  window: { from: 'updated_since', to: 'updated_until', stamp: (r) => Date.parse(String(r.updated_at)), unit: 'iso', newestFirst: true },
  ...(fails ? { fails } : {}),
});

interface Run {
  discover: { code: number; out: string; err: string };
  init: { code: number; out: string; err: string };
  draft: string;
  file: string;
  check: () => Promise<{ code: number; out: string; err: string }>;
}

/** discover and init against the partner at the injected clock; `check` runs later on the same partner, in the same folder. */
async function onboardAt(envelope: RestPartnerOptions['envelope'], endpoint: RestEndpoint, body: (r: Run) => Promise<void>): Promise<void> {
  const server = await startRestPartner({ auth: { kind: 'bearer', secret: SECRET }, envelope, maxPerPage: 7, endpoints: [endpoint] });
  const dir = mkdtempSync(join(tmpdir(), 'partner-sync-history-'));
  const saved = { switch: process.env[TEST_CLOCK_SWITCH], now: process.env[TEST_CLOCK_NOW] };
  process.env[TEST_CLOCK_SWITCH] = '1';
  process.env[TEST_CLOCK_NOW] = iso(NOW);
  process.env.HISTORY_SECRET = SECRET;
  try {
    const flags = ['--rest', server.url, '--auth', 'bearer', '--auth-env', 'HISTORY_SECRET', '--transactions', PATH];
    const config = ['--config', dir, '--store', `sqlite:${join(dir, 'store.db')}`];
    const discover = await cli(['discover', ...flags]);
    const init = await cli([...config, 'init', 'acme', '--variant', 'igaming', ...flags]);
    const file = join(dir, 'partners', 'acme.yaml');
    const draft = init.code === 0 ? readFileSync(file, 'utf8') : '';
    await body({ discover, init, draft, file, check: () => cli([...config, 'check', '--partner', 'acme']) });
  } finally {
    for (const [key, value] of [[TEST_CLOCK_SWITCH, saved.switch], [TEST_CLOCK_NOW, saved.now]] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    delete process.env.HISTORY_SECRET;
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const typeLine = (draft: string): string => /^ {8}transaction_type: .*$/m.exec(draft)?.[0] ?? '(no transaction_type line)';

describe('discover and init: REST code maps from pages spread over the history', function () {
  this.timeout(120_000);

  it('kinds only in old history: the newest pages hold deposits only, the date windows the rest; the map has them all, the TODO names the one without a spec value, and check fails on it until it is mapped', async () => {
    await onboardAt('page_token', windowed(deposits()), async (r) => {
      assert.equal(r.discover.code, 0, r.discover.err);
      assert.match(r.discover.out, /\n {2}date filter: updated_since\/updated_until \(updated_since=2026-06-16T12:00:00Z answers no records, updated_until=2000-01-01T00:00:00Z none either\)\n/);
      assert.match(r.discover.out, /\n {2}history: values read on the first 3 page\(s\) and the first page of each updated_since\/updated_until window \(the last 7 days, 7-30 days back, 30-90 days back and 90-365 days back\) \(the last 7 days: 7 records, 0 not read before; 7-30 days back: 7 records, 7 not read before; 30-90 days back: 7 records, 7 not read before; 90-365 days back: 7 records, 7 not read before\)\n/);
      assert.match(r.discover.out, /\n {2}kind: string; values "BON", "DEP", "REFUND", "WDR" \(complete: read over the history\)\n/);
      assert.equal(r.init.code, 0, r.init.err);
      assert.equal(typeLine(r.draft), '        transaction_type: { from: kind, map: { BON: bonus, DEP: deposit, WDR: withdrawal } }');
      // Where the values came from, as the replica's SELECT DISTINCT says it; no "sample" TODO.
      assert.match(r.draft, /\n {8}# transaction_type ← kind: [^\n]*every value kind holds on the first 3 page\(s\) and the first page of each updated_since\/updated_until window \(the last 7 days, 7-30 days back, 30-90 days back and 90-365 days back\); the set stopped growing \(90-365 days back, the last page with records not read before, added no value\): "BON", "DEP", "REFUND", "WDR"\n/);
      assert.match(r.draft, /\n {8}# TODO: transactions\.transaction_type: "REFUND" of kind has no obvious spec value: add it to the map \(deposit \| withdrawal \| bonus \| adjustment \| other\); until then check fails on it\n/);
      assert.doesNotMatch(r.draft, /transaction_type[^\n]*(from a sample|codes of a sample)/);
      assert.match(r.draft, /\n {8}# status ← status: every value status holds on the first 3 page\(s\)[^\n]*: "approved"\n {8}status: status\n/);

      // The TODOs confirmed as they are: check reads windows 30 and 90 days back, meets REFUND, and fails on it.
      confirmTodos(r.file);
      const unmapped = await r.check();
      assert.equal(unmapped.code, 1, unmapped.out);
      assert.match(unmapped.out, /FAIL acme transactions: 2 of 10 sampled records would be rejected after mapping \(the first page of 3 windows over the last 90 days \(the last 24 hours, 30 days ago, 90 days ago\)\): transaction_type mapping: 2 \(e\.g\. record 8, record 10\); first: record \d+: transaction_type: "REFUND" is not in the map of transaction_type/);

      // The user's answer: a refund is an adjustment. check passes.
      writeFileSync(r.file, readFileSync(r.file, 'utf8').replace("WDR: withdrawal }", "WDR: withdrawal, REFUND: adjustment }"));
      const mapped = await r.check();
      assert.equal(mapped.code, 0, mapped.out);
      assert.match(mapped.out, /ok {3}acme transactions: auth ok, the first page of 3 windows over the last 90 days \(the last 24 hours, 30 days ago, 90 days ago\): \d+ records, all valid after mapping/);
    });
  });

  it('a window that fails (HTTP 500): the map holds what the other pages showed, and a TODO says the sample is not complete and which window failed', async () => {
    const old = (q: URLSearchParams) => Date.parse(q.get('updated_since') ?? '') < NOW - 200 * DAY;
    await onboardAt('page_token', windowed(deposits(), old), async (r) => {
      assert.equal(r.init.code, 0, r.init.err);
      assert.match(r.discover.out, /90-365 days back: failed \(HTTP 500\)\); not shown complete: the window 90-365 days back failed \(HTTP 500\)\n/);
      assert.match(r.discover.out, /\n {2}kind: string; values "BON", "DEP", "REFUND", "WDR" \(a sample: maybe not all\)\n/);
      assert.equal(typeLine(r.draft), '        transaction_type: { from: kind, map: { BON: bonus, DEP: deposit, WDR: withdrawal } }');
      assert.match(r.draft, /\n {8}# TODO: transactions\.transaction_type: "REFUND" of kind has no obvious spec value: add it to the map \([^)]*\); until then check fails on it \(the codes of a sample: on the first 3 page\(s\) and the first page of each updated_since\/updated_until window \([^)]*\); the window 90-365 days back failed \(HTTP 500\)\)\n/);
      assert.match(r.draft, /\n {8}# TODO: transactions\.status: the values of status come from a sample \("approved"\): [^\n]*the window 90-365 days back failed \(HTTP 500\); a value the sample did not hold is a reject: confirm the partner's full list of codes\n/);
    });
  });

  it('a set still growing at the oldest window: the map has every kind seen, and a TODO names the kind the oldest window added', async () => {
    await onboardAt('page_token', windowed(deposits(['ADJ', 'DEP'])), async (r) => {
      assert.equal(r.init.code, 0, r.init.err);
      assert.equal(typeLine(r.draft), '        transaction_type: { from: kind, map: { ADJ: adjustment, BON: bonus, DEP: deposit, WDR: withdrawal } }');
      assert.match(r.draft, /# TODO: transactions\.transaction_type: "REFUND" of kind has no obvious spec value: [^\n]*\(the codes of a sample: [^\n]*; the set was still growing: 90-365 days back, the last page with records not read before, added "ADJ"\)\n/);
    });
  });

  it('token pages without a date filter: the first pages are all there is, and the TODO says older records could not be reached', async () => {
    await onboardAt('page_token', { path: PATH, records: deposits() }, async (r) => {
      assert.equal(r.init.code, 0, r.init.err);
      assert.match(r.discover.out, /\n {2}history: values read on the first 3 page\(s\); not shown complete: older records could not be reached: no date filter found \(none of modified_since, updated_since, [^)]*\), and token pages cannot be jumped ahead\n/);
      assert.match(r.draft, /\n {8}# TODO: transactions\.transaction_type: the values of kind come from a sample \("DEP"\): on the first 3 page\(s\); older records could not be reached: [^\n]*token pages cannot be jumped ahead; a value the sample did not hold is a reject: confirm the partner's full list of codes\n {8}transaction_type: \{ from: kind, map: \{ DEP: deposit \} \}\n/);
    });
  });

  it('page numbers with a total and no date filter: pages spread to the last; every kind mapped, with no TODO', async () => {
    const kinds = ['DEP', 'WDR', 'BON', 'ADJ'];
    const records = Array.from({ length: 70 }, (_, i) => row(i + 1, 1 + i, i < 30 ? 'DEP' : (kinds[i % 4] as string)));
    await onboardAt('spec', { path: PATH, records }, async (r) => {
      assert.equal(r.discover.code, 0, r.discover.err);
      assert.match(r.discover.out, /pagination: page numbers \(page_param page, per_page_param per_page\); meta\.total 70\n/);
      assert.match(r.discover.out, /\n {2}history: values read on the first 3 page\(s\) and page 5, page 7 and page 10 \(the last\) of 10 pages \(total 70\) \(page 5: 7 records, 7 not read before; page 7: 7 records, 7 not read before; page 10 \(the last\): 7 records, 7 not read before\)\n/);
      assert.equal(r.init.code, 0, r.init.err);
      assert.equal(typeLine(r.draft), '        transaction_type: { from: kind, map: { ADJ: adjustment, BON: bonus, DEP: deposit, WDR: withdrawal } }');
      assert.match(r.draft, /# transaction_type ← kind: [^\n]*every value kind holds on the first 3 page\(s\) and page 5, page 7 and page 10 \(the last\) of 10 pages \(total 70\); the set stopped growing \(page 10 \(the last\), [^\n]*\): "ADJ", "BON", "DEP", "WDR"\n/);
      assert.doesNotMatch(r.draft, /# TODO: transactions\.transaction_type/);
    });
  });

  it('offsets without a total: the end found by jumping ahead and halving back; kinds past the first pages mapped', async () => {
    const kinds = ['WDR', 'BON', 'DEP'];
    const records = Array.from({ length: 60 }, (_, i) => row(i + 1, 1 + i, i < 21 ? 'DEP' : (kinds[i % 3] as string)));
    await onboardAt('offset', { path: PATH, records }, async (r) => {
      assert.equal(r.discover.code, 0, r.discover.err);
      assert.match(r.discover.out, /\n {2}history: values read on the first 3 page\(s\) and offset 42 and offset 56 \(no total: offset 77, offset 42, offset 56, offset 63 asked; the list ends at offset 56\) \(offset 77: 0 records; offset 42: 7 records, 7 not read before; offset 56: 4 records, 4 not read before; offset 63: 0 records\)\n/);
      assert.equal(typeLine(r.draft), '        transaction_type: { from: kind, map: { BON: bonus, DEP: deposit, WDR: withdrawal } }');
      assert.match(r.draft, /# transaction_type ← kind: [^\n]*the set stopped growing \(offset 56, [^\n]*\): "BON", "DEP", "WDR"\n/);
      assert.doesNotMatch(r.draft, /# TODO: transactions\.transaction_type/);
    });
  });
});
