/**
 * `partner-sync fraud …` in-process (the CLI's own code path): an import flags one person's two
 * sign-ups; list, show, the decision with who and why (and exit 2 without --reason, exit 1 for a
 * decided flag), an idempotent scan, and fraud.yaml errors with file, path and line.
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main.js';
import { emailKey } from '../../src/fraud/identity.js';
import { CPA_FROM_20, plansYaml, planWith } from '../support/plans.js';

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(args, { out: (t) => { out += t + '\n'; }, err: (t) => { err += t + '\n'; }, stdin: new PassThrough(), isTty: false });
  return { code, out, err };
}

describe('fraud commands', () => {
  let dir: string;
  let base: string[];
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'fraud-cli-'));
    base = ['--config', join(dir, 'config'), '--store', `sqlite:${join(dir, 'store.sqlite')}`];
    writeFileSync(join(dir, 'customers.ndjson'), [
      { customer_id: 'c1', signup_date: '2026-11-01T00:00:00Z', affiliate_id: 'aff-1', email: 'Mia.Stone+vip@GoogleMail.com' },
      { customer_id: 'c2', signup_date: '2026-11-02T00:00:00Z', affiliate_id: 'aff-2', email: 'miastone@gmail.com' },
    ].map((r) => JSON.stringify(r)).join('\n'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('flags on import; list, show, dismiss with who and why; a decided flag is not decided again; a scan changes nothing', async () => {
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(dir, 'config'), { recursive: true });
    writeFileSync(join(dir, 'config', 'fraud.yaml'), 'rules:\n  duplicate_identity: { min_accounts: 2 }\n');
    assert.equal((await cli([...base, 'import', 'casino', '--variant', 'igaming', '--entity', 'customers', join(dir, 'customers.ndjson')])).code, 0);

    const list = await cli([...base, 'fraud', 'list', '--json']);
    assert.equal(list.code, 0);
    const flags = (JSON.parse(list.out) as { flags: { id: number; rule: string; instance: string[]; customers: string[]; status: string; affiliate_id: string | null }[] }).flags;
    assert.deepEqual(flags.map((f) => [f.id, f.rule, f.instance, f.customers, f.status, f.affiliate_id]), [[1, 'duplicate_identity', ['email', emailKey('miastone@gmail.com')], ['c1', 'c2'], 'open', null]]);
    const text = await cli([...base, 'fraud', 'list', '--status', 'open']);
    assert.match(text.out, /^ID\s+PARTNER\s+RULE\s+INSTANCE/m);
    assert.match(text.out, /1\s+casino\s+duplicate_identity\s+email m\*{6}e@gmail\.com#[0-9a-f]{24}\s+-\s+high\s+open\s+2/);

    const noReason = await cli([...base, 'fraud', 'confirm', '1']);
    assert.equal(noReason.code, 2);
    assert.match(noReason.err, /fraud confirm needs --reason TEXT/);

    const dismissed = await cli([...base, 'fraud', 'dismiss', '1', '--reason', 'same household, verified by phone', '--by', 'maria']);
    assert.equal(dismissed.code, 0, dismissed.err);
    assert.match(dismissed.out, /^flag 1 dismissed by maria at /);
    const again = await cli([...base, 'fraud', 'confirm', '1', '--reason', 'changed my mind']);
    assert.equal(again.code, 1);
    assert.match(again.err, /fraud flag 1 is already dismissed \(by maria at /);

    const show = JSON.parse((await cli([...base, 'fraud', 'show', '1', '--json'])).out) as { status: string; decided_by: string; decision_reason: string; decisions: { decision: string; by: string; reason: string }[]; evidence: { accounts: number; affiliates: string[] } };
    assert.deepEqual([show.status, show.decided_by, show.decision_reason], ['dismissed', 'maria', 'same household, verified by phone']);
    assert.deepEqual(show.decisions.map((d) => [d.decision, d.by, d.reason]), [['dismissed', 'maria', 'same household, verified by phone']]);
    assert.deepEqual([show.evidence.accounts, show.evidence.affiliates], [2, ['aff-1', 'aff-2']]);

    const scan = await cli([...base, 'fraud', 'scan', '--json']);
    assert.equal(scan.code, 0, scan.err);
    assert.deepEqual((JSON.parse(scan.out) as { partners: { partner: string; findings: number; opened: number; updated: number; withdrawn: number }[] }).partners.map((p) => [p.partner, p.findings, p.opened, p.updated, p.withdrawn]), [['casino', 1, 0, 0, 0]]);
    assert.equal((JSON.parse((await cli([...base, 'fraud', 'show', '1', '--json'])).out) as { status: string }).status, 'dismissed');
  });

  it('an invalid fraud.yaml: check lists it, loading and scanning refuse, with file, key path and line (exit 2)', async () => {
    writeFileSync(join(dir, 'config', 'fraud.yaml'), 'rules:\n  cpa_farming:\n    margn: 0.3\n');
    const file = join(dir, 'config', 'fraud.yaml');
    for (const args of [['fraud', 'scan'], ['import', 'casino', '--variant', 'igaming', '--entity', 'customers', join(dir, 'customers.ndjson')]]) {
      const r = await cli([...base, ...args]);
      assert.equal(r.code, 2);
      assert.ok(r.err.includes(`the fraud rules are invalid:\n  ${file}: rules.cpa_farming.margn (line 3): unknown key "margn" (did you mean margin?)`), r.err);
    }
    const check = await cli([...base, 'check']);
    assert.equal(check.code, 2);
    assert.ok(check.out.includes(`FAIL ${file}: rules.cpa_farming.margn (line 3): unknown key "margn" (did you mean margin?); allowed keys: enabled, baseline_usd, margin,`), check.out);
  });
  it('a decision from the command line books its commission at once: dismiss books the held CPAs, no load needed', async () => {
    const { mkdirSync } = await import('node:fs');
    const { openStore } = await import('../../src/store/store.js');
    const d = join(dir, 'decide');
    mkdirSync(join(d, 'config'), { recursive: true });
    writeFileSync(join(d, 'config', 'fraud.yaml'), 'rules:\n  duplicate_identity: { min_accounts: 2 }\n');
    writeFileSync(join(d, 'config', 'commissions.yaml'), plansYaml(planWith(CPA_FROM_20, { qualification: '{ window_days: 30, min_first_deposit_usd: 20 }' })));
    writeFileSync(join(d, 'deposits.ndjson'), ['c1', 'c2'].map((c, i) => JSON.stringify({
      transaction_id: `t${i + 1}`, customer_id: c, transaction_type: 'deposit', amount_currency: 60, currency: 'USD', transaction_date: '2026-11-03T10:00:00Z', status: 'approved',
    })).join('\n'));
    const args = ['--config', join(d, 'config'), '--store', `sqlite:${join(d, 'store.sqlite')}`];
    assert.equal((await cli([...args, 'import', 'casino', '--variant', 'igaming', '--entity', 'customers', join(dir, 'customers.ndjson')])).code, 0);
    assert.equal((await cli([...args, 'import', 'casino', '--variant', 'igaming', '--entity', 'transactions', join(d, 'deposits.ndjson')])).code, 0);
    const ledger = async (): Promise<string[]> => {
      const store = await openStore({ url: `sqlite:${join(d, 'store.sqlite')}` });
      try {
        return ((await store.knex('commission_ledger').orderBy('id').select('affiliate_id', 'amount_usd')) as { affiliate_id: string; amount_usd: unknown }[])
          .map((r) => `${r.affiliate_id} ${Number(r.amount_usd).toFixed(2)}`);
      } finally {
        await store.close();
      }
    };
    assert.deepEqual(await ledger(), [], 'both CPAs are held for review while the flag is open');
    const dismissed = await cli([...args, 'fraud', 'dismiss', '1', '--reason', 'two people', '--by', 'maria']);
    assert.equal(dismissed.code, 0, dismissed.err);
    assert.deepEqual((await ledger()).sort(), ['aff-1 100.00', 'aff-2 100.00']);
  });

  it('fraud list is the review queue in money order: the commission each flag holds (USD), largest first, then severity', async () => {
    const { mkdirSync } = await import('node:fs');
    const d = join(dir, 'queue');
    mkdirSync(join(d, 'config'), { recursive: true });
    writeFileSync(join(d, 'config', 'fraud.yaml'), 'rules:\n  duplicate_identity: { min_accounts: 2 }\n');
    writeFileSync(join(d, 'config', 'commissions.yaml'), plansYaml(planWith(CPA_FROM_20, { amount_usd: '{ default: 100, by_country: { DE: 150 } }' })));
    const c = (id: string, affiliate: string, country: string, extra: Record<string, string>) => ({ customer_id: id, signup_date: '2026-11-01T00:00:00Z', affiliate_id: affiliate, country_code: country, ...extra });
    writeFileSync(join(d, 'customers.ndjson'), [
      // An e-mail under two affiliates (high), both deposit: 150 (DE) + 100 = 250.00 held.
      c('a1', 'aff-1', 'DE', { email: 'Ann.Lee+x@gmail.com' }), c('a2', 'aff-2', 'US', { email: 'annlee@gmail.com' }),
      // One click, three accounts of one affiliate (medium), all DE and depositing: 3 × 150 = 450.00.
      c('b1', 'aff-3', 'DE', { click_id: 'clk-b' }), c('b2', 'aff-3', 'DE', { click_id: 'clk-b' }), c('b3', 'aff-3', 'DE', { click_id: 'clk-b' }),
      // No deposit, nothing held: an e-mail under two affiliates (high), a click under one (medium).
      c('c1', 'aff-4', 'DE', { email: 'Zed@gmail.com' }), c('c2', 'aff-5', 'DE', { email: 'z.ed@gmail.com' }),
      c('d1', 'aff-6', 'DE', { click_id: 'clk-d' }), c('d2', 'aff-6', 'DE', { click_id: 'clk-d' }),
    ].map((r) => JSON.stringify(r)).join('\n'));
    writeFileSync(join(d, 'deposits.ndjson'), ['a1', 'a2', 'b1', 'b2', 'b3'].map((id, i) => JSON.stringify({
      transaction_id: `t${i + 1}`, customer_id: id, transaction_type: 'deposit', amount_currency: 60, currency: 'USD', transaction_date: '2026-11-03T10:00:00Z', status: 'approved',
    })).join('\n'));
    const args = ['--config', join(d, 'config'), '--store', `sqlite:${join(d, 'store.sqlite')}`];
    assert.equal((await cli([...args, 'import', 'casino', '--variant', 'igaming', '--entity', 'customers', join(d, 'customers.ndjson')])).code, 0);
    assert.equal((await cli([...args, 'import', 'casino', '--variant', 'igaming', '--entity', 'transactions', join(d, 'deposits.ndjson')])).code, 0);

    const list = await cli([...args, 'fraud', 'list', '--json']);
    assert.equal(list.code, 0, list.err);
    const flags = (JSON.parse(list.out) as { flags: { customers: string[]; held_usd: string; severity: string }[] }).flags;
    assert.deepEqual(flags.map((f) => [f.customers, f.held_usd, f.severity]), [
      [['b1', 'b2', 'b3'], '450.00', 'medium'],
      [['a1', 'a2'], '250.00', 'high'],
      [['c1', 'c2'], '0.00', 'high'],
      [['d1', 'd2'], '0.00', 'medium'],
    ]);
    const text = await cli([...args, 'fraud', 'list', '--status', 'open']);
    assert.match(text.out, /^ID\s+PARTNER\s+RULE\s+INSTANCE\s+AFFILIATE\s+SEVERITY\s+STATUS\s+CUSTOMERS\s+HELD USD\s+FIRST SEEN/m);
    const rows = text.out.split('\n').filter((l) => l.includes('duplicate_identity'));
    assert.deepEqual(rows.map((l) => /(\d+)\s+(\d+\.\d{2})\s+\d{4}-\d{2}-\d{2} /.exec(l)?.slice(1)), [['3', '450.00'], ['2', '250.00'], ['2', '0.00'], ['2', '0.00']]);
    assert.match(rows[0]!, /click clk-b/);
    const top0 = (JSON.parse(list.out) as { flags: { id: number }[] }).flags[0]!.id;
    assert.match((await cli([...args, 'fraud', 'show', String(top0)])).out, /^held:\s+450\.00 USD of commission for review$/m);
    assert.match(rows[3]!, /click clk-d/);

    // Dismissing the largest releases what it held: its held commission goes to 0 and it leaves the open queue's top.
    const top = (JSON.parse(list.out) as { flags: { id: number }[] }).flags[0]!.id;
    assert.equal((await cli([...args, 'fraud', 'dismiss', String(top), '--reason', 'three siblings, one router', '--by', 'maria'])).code, 0);
    const open = (JSON.parse((await cli([...args, 'fraud', 'list', '--status', 'open', '--json'])).out) as { flags: { customers: string[]; held_usd: string }[] }).flags;
    assert.deepEqual(open.map((f) => [f.customers, f.held_usd]), [[['a1', 'a2'], '250.00'], [['c1', 'c2'], '0.00'], [['d1', 'd2'], '0.00']]);
    const dismissed = (JSON.parse((await cli([...args, 'fraud', 'list', '--status', 'dismissed', '--json'])).out) as { flags: { held_usd: string }[] }).flags;
    assert.deepEqual(dismissed.map((f) => f.held_usd), ['0.00']);
  });

  it('a scan evaluates the commissions after it: the flags it opens show what they hold at once, booked CPAs withheld', async () => {
    const { mkdirSync } = await import('node:fs');
    const d = join(dir, 'scan-held');
    mkdirSync(join(d, 'config'), { recursive: true });
    writeFileSync(join(d, 'config', 'commissions.yaml'), plansYaml(planWith(CPA_FROM_20, { amount_usd: '{ default: 100, by_country: { DE: 150 } }' })));
    writeFileSync(join(d, 'customers.ndjson'), [
      { customer_id: 'a1', signup_date: '2026-11-01T00:00:00Z', affiliate_id: 'aff-1', country_code: 'DE', email: 'Ann.Lee+x@gmail.com' },
      { customer_id: 'a2', signup_date: '2026-11-01T00:00:00Z', affiliate_id: 'aff-2', country_code: 'US', email: 'annlee@gmail.com' },
    ].map((r) => JSON.stringify(r)).join('\n'));
    writeFileSync(join(d, 'deposits.ndjson'), ['a1', 'a2'].map((id, i) => JSON.stringify({
      transaction_id: `t${i + 1}`, customer_id: id, transaction_type: 'deposit', amount_currency: 60, currency: 'USD', transaction_date: '2026-11-03T10:00:00Z', status: 'approved',
    })).join('\n'));
    const args = ['--config', join(d, 'config'), '--store', `sqlite:${join(d, 'store.sqlite')}`];
    // Loaded before any fraud rule: both CPAs are booked (150 + 100).
    assert.equal((await cli([...args, 'import', 'casino', '--variant', 'igaming', '--entity', 'customers', join(d, 'customers.ndjson')])).code, 0);
    assert.equal((await cli([...args, 'import', 'casino', '--variant', 'igaming', '--entity', 'transactions', join(d, 'deposits.ndjson')])).code, 0);
    writeFileSync(join(d, 'config', 'fraud.yaml'), 'rules:\n  duplicate_identity: { min_accounts: 2 }\n');
    const scan = await cli([...args, 'fraud', 'scan']);
    assert.equal(scan.code, 0, scan.err);
    const flags = (JSON.parse((await cli([...args, 'fraud', 'list', '--json'])).out) as { flags: { customers: string[]; held_usd: string }[] }).flags;
    assert.deepEqual(flags.map((f) => [f.customers, f.held_usd]), [[['a1', 'a2'], '250.00']]);
  });
});
