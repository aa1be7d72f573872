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
});
