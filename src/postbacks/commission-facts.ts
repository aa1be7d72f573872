/**
 * CPA facts from the commission ledger, written in the evaluation's transaction with the lines
 * that make them: a positive `cpa_ftd` line is a CPA qualified, a negative clawback line a CPA
 * clawed back. The ledger only moves when a key's target differs from its total, so an evaluation
 * that changes nothing (a replay, a backfill) books nothing and fires nothing; the fact key counts
 * the key's earlier lines of the same kind, so a CPA paid again after a clawback is a new fact.
 * A CPA held for a fraud review books no line while the flag is open: it is announced when the
 * release books it, and a confirmed flag, which never books it, announces nothing.
 */
import type { Knex } from 'knex';
import type { NewLine } from '../commission/ledger.js';
import type { LineState } from '../commission/target.js';
import { CPA_REASONS } from '../commission/rules/cpa-ftd.js';
import { centsText } from '../kernel/money.js';
import { definitionsFor } from './definitions.js';
import type { Fact } from './events.js';
import { readCustomerValues } from './load-facts.js';
import { writeEvents } from './outbox.js';
import { append } from '../kernel/collections.js';

const CLAWBACKS: readonly string[] = [CPA_REASONS.clawbackReversed, CPA_REASONS.clawbackChargeback, CPA_REASONS.clawbackDeleted];

function kindOf(reason: string, positive: boolean): 'cpa_qualified' | 'cpa_clawback' | undefined {
  if (reason === CPA_REASONS.paid && positive) return 'cpa_qualified';
  if (CLAWBACKS.includes(reason) && !positive) return 'cpa_clawback';
  return undefined;
}

/** Writes the CPA events of the lines just appended (`lines`: the keys' lines before them). */
export async function writeCpaEvents(trx: Knex.Transaction, added: readonly NewLine[], lines: ReadonlyMap<string, LineState[]>, now: string): Promise<void> {
  const cpa = added.filter((l) => l.target.plan.kind === 'cpa_ftd' && l.target.customer !== null && kindOf(l.target.reason, l.amount.greaterThan(0)) !== undefined);
  if (cpa.length === 0) return;
  const defs = await definitionsFor(trx, cpa.map((l) => l.target.affiliate));
  if (!defs.some((d) => d.events.includes('cpa_qualified') || d.events.includes('cpa_clawback'))) return;
  const facts: Fact[] = [];
  const byPartner = new Map<string, NewLine[]>();
  for (const l of cpa) append(byPartner, l.target.plan.partner, l);
  for (const [partner, list] of byPartner) {
    const customers = await readCustomerValues(trx, partner, list.map((l) => l.target.customer as string));
    for (const l of list) {
      const kind = kindOf(l.target.reason, l.amount.greaterThan(0)) as 'cpa_qualified' | 'cpa_clawback';
      const customer = customers.get(l.target.customer as string);
      if (!customer) continue;
      const before = (lines.get(l.target.key) ?? []).filter((x) => x.affiliate === l.target.affiliate && kindOf(x.reason, x.amount.greaterThan(0)) === kind).length;
      facts.push({
        kind, key: `${kind}|${l.target.key}|${l.target.affiliate}|${before + 1}`, orderKey: `${partner}|${l.target.customer as string}`,
        values: {
          ...customer, affiliate_id: l.target.affiliate, plan_id: l.target.plan.id, amount: centsText(l.amount.abs()), currency: 'USD', amount_usd: centsText(l.amount.abs()),
          transaction_id: l.target.refId ?? undefined, month: l.target.period,
        },
      });
    }
  }
  await writeEvents(trx, facts, defs, now);
}
