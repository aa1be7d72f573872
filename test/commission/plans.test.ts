import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatPlanError, loadPlans, parsePlans } from '../../src/commission/load-plans.js';
import { packageRoot } from '../../src/paths.js';
import { CPA } from '../support/plans.js';

const messages = (yaml: string) => parsePlans(yaml, 'commissions.yaml').errors.map(formatPlanError);

describe('commission plans file', () => {
  it('the bundled config/commissions.yaml is valid and resolves defaults', async () => {
    const { plans, errors } = await loadPlans(join(packageRoot(), 'config', 'commissions.yaml'));
    assert.deepEqual(errors, []);
    assert.deepEqual(plans.map((p) => [p.id, p.kind, p.partner]), [
      ['casino-cpa-2026', 'cpa_ftd', 'sandbox-casino'],
      ['casino-revshare-2026', 'revshare', 'sandbox-casino'],
      ['prop-challenge-cpa-2026', 'challenge_cpa', 'sandbox-prop'],
      ['prop-funded-bonus-2026', 'phase_bonus', 'sandbox-prop'],
    ]);
    const cpa = plans[0];
    assert.ok(cpa?.kind === 'cpa_ftd');
    assert.equal(cpa.amountUsd.byCountry.get('DE')?.toFixed(), '150');
    assert.deepEqual(cpa.clawback, { days: 90, reversalStatuses: ['reversed'], chargebackSubtypes: ['chargeback'] });
    const fees = plans[2];
    assert.ok(fees?.kind === 'challenge_cpa');
    assert.equal(fees.rates[0]?.rate.toFixed(), '0.15');
  });

  it('reports every schema error with file, path and line', () => {
    assert.deepEqual(messages(`plans:
  - id: rs
    kind: revshare
    partner: casino
    affiliates: all
    effective: { from: 2026-01-01 }
    revenue: gross
    tiers:
      mode: tiered
      bands:
        - { from_usd: 0, rate: 1.5 }
    carry: true
  - id: x
    kind: cpa
`), [
      'commissions.yaml: plans.0.revenue (line 7): must be one of ggr, ngr, got "gross"',
      'commissions.yaml: plans.0.tiers.bands.0.rate (line 11): must be a rate between 0 and 1 (0.25 = 25%), as a number or a decimal string, got 1.5',
      'commissions.yaml: plans.0.carry (line 12): unknown key "carry"; allowed keys: id, kind, partner, affiliates, effective, revenue, tiers, negative_carryover, close_after_hours',
      'commissions.yaml: plans.1.kind (line 14): must be one of cpa_ftd, revshare, challenge_cpa, phase_bonus, got "cpa"',
    ]);
  });

  it('checks what the schema cannot: unique ids, date order, whole months, ascending bands, overlapping plans', () => {
    assert.deepEqual(messages(`plans:${CPA}${CPA.replace('effective: { from: 2026-01-01 }', 'effective: { from: 2026-06-01, to: 2026-05-31 }')}
  - id: rs
    kind: revshare
    partner: casino
    affiliates: [a1]
    effective: { from: 2026-01-02, to: 2026-02-27 }
    revenue: ngr
    tiers: { mode: ladder, bands: [{ from_usd: 10, rate: 0.2 }, { from_usd: 5, rate: 0.3 }] }
  - id: cpa-2
    kind: cpa_ftd
    partner: casino
    affiliates: [a1, a2]
    effective: { from: 2025-01-01, to: 2026-01-01 }
    amount_usd: { default: 1234567890123456 }
`), [
      'commissions.yaml: plans.1.id (line 8): plan id "cpa" is also used by plans.0: ids name ledger lines and must be unique',
      'commissions.yaml: plans.1.effective.to (line 12): must not be before effective.from (2026-06-01), got 2026-05-31',
      'commissions.yaml: plans.2.effective.from (line 18): a RevShare plan runs in whole calendar months: must be the first day of a month, got 2026-01-02',
      'commissions.yaml: plans.2.effective.to (line 18): a RevShare plan runs in whole calendar months: must be the last day of a month (2026-02-28), got 2026-02-27',
      'commissions.yaml: plans.2.tiers.bands.0.from_usd (line 20): the first band must start at 0, got 10',
      'commissions.yaml: plans.2.tiers.bands.1.from_usd (line 20): bands must ascend: must be more than the previous band\'s from_usd (10), got 5',
      'commissions.yaml: plans.3.effective (line 25): overlaps plan cpa (plans.0): both are cpa_ftd plans of partner casino for affiliate a1, a2 on the same days; end one (effective.to) before the other starts',
      'commissions.yaml: plans.3.amount_usd.default (line 26): has 16 significant digits; at most 15 (write it as a decimal string if it is exact)',
    ]);
  });

  it('plans of different kinds, or of one kind on separate dates, may share an affiliate (hybrid)', () => {
    assert.deepEqual(messages(`plans:${CPA.replace('2026-01-01 }', '2026-01-01, to: 2026-06-30 }')}${CPA.replace('id: cpa', 'id: cpa-h2').replace('2026-01-01 }', '2026-07-01 }')}
  - id: rs
    kind: revshare
    partner: casino
    affiliates: all
    effective: { from: 2026-01-01 }
    revenue: ggr
    tiers: { mode: tiered, bands: [{ from_usd: 0, rate: "0.3" }] }
`), []);
  });

  it('a YAML syntax error and an unreadable file are errors too', async () => {
    assert.match(messages('plans:\n  - id: [\n')[0] ?? '', /^commissions\.yaml: \(file\) \(line \d+\): YAML syntax/);
    const dir = mkdtempSync(join(tmpdir(), 'partner-sync-plans-'));
    try {
      const { errors } = await loadPlans(join(dir, 'missing.yaml'));
      assert.match(errors[0]?.message ?? '', /cannot read the file: ENOENT/);
      writeFileSync(join(dir, 'c.yaml'), '- just a list\n');
      assert.match((await loadPlans(join(dir, 'c.yaml'))).errors[0]?.message ?? '', /must be a mapping with the key plans/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
