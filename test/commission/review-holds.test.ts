/**
 * Review holds (docs/commissions.md, Review holds), through the real Loader with the commission
 * job's hooks and the fraud side's flags: an open flag holds, a dismissal releases, a confirmation
 * voids with reversing lines; RevShare months leave a confirmed customer out; FX and review holds
 * are shown apart; a crash between a decision and its evaluation loses nothing.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { evaluatePartner } from '../../jobs/commission.js';
import { resumeJobs } from '../../jobs/load-hooks.js';
import { commissionsCommand } from '../../src/cli/commands/commissions.js';
import { statusCommand } from '../../src/cli/commands/status.js';
import type { Io } from '../../src/cli/io.js';
import { listReviewHolds } from '../../src/commission/review-holds.js';
import { decideFlag, getFlag, upsertFlag } from '../../src/fraud/flags.js';
import { silentLogger } from '../../src/log.js';
import { CHALLENGE_FEES, CPA_FROM_20, plansYaml, REVSHARE } from '../support/plans.js';
import { STORES } from '../support/stores.js';
import { brief, harness, igCustomer, play, prop, trader, tx, type Harness } from './harness.js';

const PLANS = plansYaml(CPA_FROM_20, REVSHARE, CHALLENGE_FEES, `
  - id: funded
    kind: phase_bonus
    partner: firm
    affiliates: all
    effective: { from: 2026-01-01 }
    phase: funded
    amount_usd: 50`);

const CPA_C1 = 'cpa_ftd|cpa|casino|c1';
const RS_NOV = 'revshare|rs|casino|aff-1|2026-11';

function captureIo(): Io & { stdout: string[] } {
  const stdout: string[] = [];
  return { stdout, out: (t) => stdout.push(t), err: () => {}, stdin: new PassThrough(), isTty: false };
}

/** A flag as the fraud job opens it (its transaction calls markForReview), then the evaluation after its commit. */
async function openFlag(h: Harness, customers: string[], instance = 'k1', rule = 'cpa_farming', partner = 'casino'): Promise<number> {
  const { store } = h.t;
  const variant = partner === 'casino' ? 'igaming' : 'prop-trading';
  const r = await store.transaction((trx) => upsertFlag(trx, store, {
    partner, variant, rule, instanceKey: instance, affiliateId: 'aff-1', severity: 'high', evidence: { test: true }, customers,
  }));
  await settle(h, partner);
  return r.id;
}

/** What a decision command runs after its commit: the partner's pending commission scope. */
const settle = (h: Harness, partner = 'casino') => evaluatePartner(h.t.store, h.plans, partner, partner === 'casino' ? 'igaming' : 'prop-trading', 'review', silentLogger());

const keyTotal = async (h: Harness, key: string) => (await h.net()).get(`${key} aff-1`) ?? '0.00';
/** The commission a flag carries as held (fraud_flags.held_cents, docs/fraud.md). */
const heldOf = async (h: Harness, id: number) => (await getFlag(h.t.store.knex, id))?.held_usd;
const reviewRows = async (h: Harness) => (await listReviewHolds(h.t.store.knex)).map((r) => [r.line_key, r.customer_id, r.withheld_usd, r.waiting_usd, r.flags.map((f) => f.id)]);

for (const backend of STORES) {
  describe(`commission review holds on ${backend.name}`, () => {
    let h: Harness;
    beforeEach(async () => { h = await harness(backend, PLANS); });
    afterEach(async () => h.drop());

    it('an open flag holds the FTD CPA unbooked; a dismissal books it (100.00) and releases the hold', async () => {
      await h.load('customers', [igCustomer('c1')]);
      const flag = await openFlag(h, ['c1']);
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 50)]);
      assert.deepEqual(await h.lines(), [], 'nothing is booked while the flag is open');
      assert.deepEqual(await reviewRows(h), [[CPA_C1, 'c1', '0.00', '100.00', [flag]]]);
      assert.equal(await heldOf(h, flag), '100.00', 'the flag carries what its hold keeps waiting');
      assert.deepEqual(await h.holds(), [], 'a review hold is not an FX hold');
      await h.agrees();

      await decideFlag(h.t.store, flag, 'dismissed', 'maria', 'verified customer');
      await settle(h);
      assert.deepEqual(brief(await h.lines()), [['cpa_ftd', '100.00']]);
      assert.deepEqual(await reviewRows(h), []);
      assert.equal(await heldOf(h, flag), '0.00', 'released: the flag holds nothing');
      await h.agrees();
    });

    it('a flag confirmed after booking: withheld while open, then a fraud_void line brings the key to 0; recompute agrees', async () => {
      await h.load('customers', [igCustomer('c1'), igCustomer('c2')]);
      await h.load('transactions', [tx('t1', 'c1', 'deposit', 50), tx('t2', 'c2', 'deposit', 50)]);
      assert.equal(await keyTotal(h, CPA_C1), '100.00');
      const flag = await openFlag(h, ['c1']);
      assert.equal((await h.lines()).length, 2, 'opening a flag books nothing: the line stays, withheld');
      assert.deepEqual(await reviewRows(h), [[CPA_C1, 'c1', '100.00', '0.00', [flag]]]);
      assert.equal(await heldOf(h, flag), '100.00', 'the flag carries what its hold withholds');
      await h.agrees();

      await decideFlag(h.t.store, flag, 'confirmed', 'maria', 'one device for 40 accounts');
      await settle(h);
      const lines = await h.lines({ key: CPA_C1 });
      assert.deepEqual(brief(lines), [['cpa_ftd', '100.00'], ['fraud_void', '-100.00']]);
      assert.equal(lines[1]?.total_usd, '0.00');
      assert.equal(lines[1]?.period, '2026-11');
      assert.match(String(lines[1]?.basis.why), new RegExp(`fraud flag #${flag} \\(cpa_farming\\) confirmed`));
      assert.equal(await keyTotal(h, CPA_C1), '0.00');
      assert.equal(await keyTotal(h, 'cpa_ftd|cpa|casino|c2'), '100.00', 'the other customer is untouched');
      assert.deepEqual(await reviewRows(h), []);
      // More data of the confirmed customer books nothing more.
      await h.load('transactions', [tx('t3', 'c1', 'deposit', 500, { transaction_date: '2026-10-05T12:00:00Z' })]);
      assert.equal((await h.lines({ key: CPA_C1 })).length, 2);
      await h.agrees();
    });

    it('a RevShare month holds an open customer\'s share apart, leaves a confirmed customer out, and moves by the difference', async () => {
      await h.load('customers', [igCustomer('c1'), igCustomer('c2')]);
      await h.load('activity', [play('2026-11-03', 'c1', { ggr: 1000 }), play('2026-11-03', 'c2', { ggr: 400 })]);
      // (1000 + 400) × 25% = 350.00
      assert.deepEqual(brief(await h.lines({ key: RS_NOV })), [['revshare', '350.00']]);
      const flag = await openFlag(h, ['c2']);
      // Without c2: 1000 × 25% = 250.00; c2's 400 × 25% = 100.00 is held apart.
      assert.deepEqual(brief(await h.lines({ key: RS_NOV })), [['revshare', '350.00'], ['revshare', '-100.00']]);
      assert.deepEqual(await reviewRows(h), [[RS_NOV, null, '0.00', '100.00', [flag]]]);
      const apart = (await h.lines({ key: RS_NOV }))[1];
      assert.deepEqual([apart?.sources, apart?.basis.held_apart_usd], [['review:c2'], '100.00']);
      // More activity of either customer while open: c1's counts, c2's waits.
      await h.load('activity', [play('2026-11-04', 'c1', { ggr: 200 }), play('2026-11-04', 'c2', { ggr: 40 })]);
      assert.equal(await keyTotal(h, RS_NOV), '300.00');
      assert.deepEqual(await reviewRows(h), [[RS_NOV, null, '0.00', '110.00', [flag]]]);
      assert.equal(await heldOf(h, flag), '110.00', 'a RevShare share held apart counts in the flag too: (400 + 40) × 25%');
      await h.agrees();

      await decideFlag(h.t.store, flag, 'confirmed', 'maria', 'bonus abuse ring');
      await settle(h);
      assert.equal(await keyTotal(h, RS_NOV), '300.00', 'confirmed: c2 stays out of the month');
      assert.deepEqual(await reviewRows(h), []);
      assert.deepEqual(brief(await h.lines({ key: RS_NOV })), [['revshare', '350.00'], ['revshare', '-100.00'], ['revshare', '50.00']], 'the confirmation moves nothing: c2 was already out');
      // Later activity of the confirmed customer moves nothing; c1's does.
      await h.load('activity', [play('2026-11-05', 'c2', { ggr: 1000 }), play('2026-11-05', 'c1', { ggr: 100 })]);
      assert.deepEqual(brief(await h.lines({ key: RS_NOV })).slice(3), [['revshare', '25.00']]);
      assert.equal(await keyTotal(h, RS_NOV), '325.00');
      await h.agrees();
    });
  });
}

const [sqlite] = STORES;
describe('commission review holds: reports and crashes', () => {
  let h: Harness;
  let dir: string;
  beforeEach(async () => {
    h = await harness(sqlite!, PLANS);
    dir = mkdtempSync(join(tmpdir(), 'partner-sync-review-'));
    writeFileSync(join(dir, 'commissions.yaml'), PLANS);
  });
  afterEach(async () => {
    await h.drop();
    rmSync(dir, { recursive: true, force: true });
  });
  const globals = (json = true) => ({ config: dir, store: h.t.url, json, clock: h.clock });

  it('an FX hold and a review hold on one customer are shown apart by commissions and status (text and --json)', async () => {
    await h.load('customers', [igCustomer('c1'), igCustomer('c2')]);
    // c1: 18 EUR without a rate (FX hold); c2: 50 USD, booked.
    await h.load('transactions', [tx('t1', 'c1', 'deposit', 18, { currency: 'EUR' }), tx('t2', 'c2', 'deposit', 50)]);
    const flag = await openFlag(h, ['c1', 'c2']);
    const json = captureIo();
    assert.equal(await commissionsCommand(globals(), {}, json), 0);
    const report = JSON.parse(json.stdout.join('')) as Record<string, unknown> & { held: { line_key: string; missing: string[] }[]; review_held: { line_key: string; withheld_usd: string; waiting_usd: string | null }[] };
    assert.deepEqual(report.held.map((x) => [x.line_key, x.missing]), [[CPA_C1, ['EUR 2026-10-02']]]);
    assert.deepEqual(report.review_held.map((x) => [x.line_key, x.withheld_usd, x.waiting_usd]), [[CPA_C1, '0.00', null], ['cpa_ftd|cpa|casino|c2', '100.00', '0.00']]);
    assert.deepEqual([report.total_usd, report.review_withheld_usd, report.payable_usd], ['100.00', '100.00', '0.00']);

    const text = captureIo();
    await commissionsCommand(globals(false), {}, text);
    const out = text.stdout.join('\n');
    assert.match(out, /held, waiting for FX rates \(1\)/);
    assert.match(out, /held for review \(2\)/);
    assert.match(out, new RegExp(`FX rate missing +#${flag} cpa_farming`));
    assert.match(out, /payable: 0\.00 USD of 100\.00 \(100\.00 withheld for review\)/);

    const status = captureIo();
    await statusCommand(globals(), {}, status);
    const c = (JSON.parse(status.stdout.join('')) as { commissions: Record<string, unknown>[] }).commissions[0];
    assert.deepEqual([c?.held, c?.missing_rates, c?.review_held, c?.review_withheld_usd, c?.review_waiting_usd, c?.review_flags], [1, ['EUR 2026-10-02'], 2, '100.00', '0.00', [flag]]);
    const statusText = captureIo();
    await statusCommand(globals(false), {}, statusText);
    assert.match(statusText.stdout.join('\n'), /HELD FX .*HELD REVIEW +REVIEW WITHHELD USD +REVIEW WAITING USD +FRAUD FLAGS/);

    // The rate arrives: c1's CPA is computable (18 × 1.12 = 20.16, qualifies) but still held for review.
    await h.rates('date,currency,rate\n2026-10-02,EUR,1.12\n');
    assert.deepEqual(await h.holds(), []);
    assert.deepEqual(await reviewRows(h), [[CPA_C1, 'c1', '0.00', '100.00', [flag]], ['cpa_ftd|cpa|casino|c2', 'c2', '100.00', '0.00', [flag]]]);
    await h.agrees();
  });

  it('while a flag is open a clawback is still booked: nothing more is paid, less can be', async () => {
    await h.load('customers', [igCustomer('c1')]);
    await h.load('transactions', [tx('t1', 'c1', 'deposit', 50)]);
    await openFlag(h, ['c1']);
    await h.load('transactions', [tx('t1', 'c1', 'deposit', 50, { status: 'reversed' })]);
    assert.deepEqual(brief(await h.lines()), [['cpa_ftd', '100.00'], ['cpa_clawback_reversed', '-100.00']]);
    assert.deepEqual(await reviewRows(h), [], 'nothing left at stake');
    await h.agrees();
  });

  it('prop trading: a confirmed flag voids the trader\'s challenge fee CPA and phase bonus with reversing lines', async () => {
    await h.load('customers', [trader('p1', { phase: 'funded', last_modified_date: '2026-11-04T00:00:00Z' })], prop);
    await h.load('transactions', [tx('f1', 'p1', 'challenge_fee', 500)], prop);
    assert.deepEqual((await h.lines()).map((l) => [l.plan_id, l.amount_usd]), [['funded', '50.00'], ['fees', '50.00']]);
    const flag = await openFlag(h, ['p1'], 'p1|p9', 'mirrored_pnl', 'firm');
    assert.deepEqual((await reviewRows(h)).map((r) => [r[0], r[2], r[3]]), [['challenge_cpa|fees|firm|f1', '50.00', '0.00'], ['phase_bonus|funded|firm|p1', '50.00', '0.00']]);
    await decideFlag(h.t.store, flag, 'confirmed', 'maria', 'hedged pair');
    await settle(h, 'firm');
    assert.deepEqual((await h.lines()).map((l) => [l.plan_id, l.reason, l.amount_usd, l.total_usd]), [
      ['funded', 'phase_bonus', '50.00', '50.00'], ['fees', 'challenge_fee', '50.00', '50.00'],
      ['fees', 'fraud_void', '-50.00', '0.00'], ['funded', 'fraud_void', '-50.00', '0.00'],
    ]);
    assert.deepEqual(await reviewRows(h), []);
    await h.agrees();
  });

  it('a crash between a decision and its evaluation: the pending scope survives and the next evaluation completes it', async () => {
    await h.load('customers', [igCustomer('c1'), igCustomer('c2')]);
    await h.load('transactions', [tx('t1', 'c1', 'deposit', 50)]);
    const flag = await openFlag(h, ['c1']);
    // The decision commits; the process dies before evaluating.
    await decideFlag(h.t.store, flag, 'confirmed', 'maria', 'stolen card');
    const pending = await h.t.store.knex('commission_pending').where('partner_id', 'casino').orderBy(['kind', 'value']).select('kind', 'value');
    assert.deepEqual(pending, [{ kind: 'customer', value: 'c1' }, { kind: 'review', value: 'c1' }]);
    assert.equal(await keyTotal(h, CPA_C1), '100.00', 'not voided yet');
    // The next load of the partner (of another customer) takes the pending scope.
    await h.load('transactions', [tx('t2', 'c2', 'deposit', 10)]);
    assert.deepEqual(brief(await h.lines({ key: CPA_C1 })), [['cpa_ftd', '100.00'], ['fraud_void', '-100.00']]);
    assert.equal(Number((await h.t.store.knex('commission_pending').count({ n: '*' }))[0]?.n), 0);
    await resumeJobs(h.t.store, { plans: h.plans, logger: silentLogger() });
    assert.deepEqual(brief(await h.lines({ key: CPA_C1 })), [['cpa_ftd', '100.00'], ['fraud_void', '-100.00']], 'nothing left to resume');
    await h.agrees();
  });
});
