/**
 * The commission plans the tests pay by, written as YAML exactly as in config/commissions.yaml:
 * one named entry per plan, so that the amounts a test expects can be read against the plan it
 * names. `plansYaml(...entries)` is the text of a plans file holding them; `planWith(entry, keys)`
 * the same entry with a few keys changed (another partner, a qualification), visible where it is
 * used; `plansFrom(yaml)` parses a plans file and fails at once on a broken one.
 *
 * A test of one plan kind's rules (test/commission/cpa-ftd.test.ts, revshare, prop-trading, property) writes
 * out its own plans: there the plan is what is tested.
 */
import { formatPlanError, parsePlans } from '../../src/commission/load-plans.js';
import type { Plan } from '../../src/commission/plans.js';

/** CPA: 100 USD for each casino customer's first deposit, whatever its amount (clawed back within the default 90 days). */
export const CPA = `
  - id: cpa
    kind: cpa_ftd
    partner: casino
    affiliates: all
    effective: { from: 2026-01-01 }
    amount_usd: { default: 100 }`;

/** CPA: 100 USD for a casino customer's first deposit of 20 USD or more. */
export const CPA_FROM_20 = `
  - id: cpa
    kind: cpa_ftd
    partner: casino
    affiliates: all
    effective: { from: 2026-01-01 }
    qualification: { min_first_deposit_usd: 20 }
    amount_usd: { default: 100 }`;

/** RevShare: 25% of each casino affiliate's monthly GGR, one band. */
export const REVSHARE = `
  - id: rs
    kind: revshare
    partner: casino
    affiliates: all
    effective: { from: 2026-01-01 }
    revenue: ggr
    tiers: { mode: tiered, bands: [{ from_usd: 0, rate: 0.25 }] }`;

/** Challenge CPA: 10% of each prop firm's challenge fee. */
export const CHALLENGE_FEES = `
  - id: fees
    kind: challenge_cpa
    partner: firm
    affiliates: all
    effective: { from: 2026-01-01 }
    rates: [{ rate: 0.10 }]`;

/** The text of a plans file (config/commissions.yaml) holding these entries. */
export function plansYaml(...entries: string[]): string {
  return `plans:${entries.join('')}\n`;
}

/**
 * `entry` with these top-level keys set to these YAML values (a key it has is replaced, another
 * added): `planWith(CPA, { partner: 'p1' })`.
 */
export function planWith(entry: string, keys: Record<string, string>): string {
  let out = entry;
  for (const [key, value] of Object.entries(keys)) {
    const line = new RegExp(`^(    |  - )${key}: .*$`, 'm');
    out = line.test(out) ? out.replace(line, (_all, indent: string) => `${indent}${key}: ${value}`) : `${out}\n    ${key}: ${value}`;
  }
  return out;
}

/** The plans of a plans file; a plan error fails the test with its message. */
export function plansFrom(yaml: string): Plan[] {
  const { plans, errors } = parsePlans(yaml, 'test.yaml');
  if (errors.length > 0) throw new Error(errors.map(formatPlanError).join('\n'));
  return plans;
}
