/**
 * An affiliate's month of commission approved: a closed month (before the current UTC month)
 * is approved once, by a manager, at the net of its ledger lines then. The approval and its
 * `commission_approved` event are written in one transaction (the outbox rule); approving the
 * same month again is refused, so the event fires once.
 */
import type { Store } from '../store/store.js';
import { definitionsFor } from './definitions.js';
import { writeEvents } from './outbox.js';

export class ApprovalError extends Error {}

export interface Approval {
  affiliate: string;
  month: string;
  net_usd: string;
  lines: number;
  approved_by: string;
  approved_at: string;
}

export async function approveMonth(store: Store, affiliate: string, month: string, by: string): Promise<Approval> {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(month)) throw new ApprovalError(`--month must be YYYY-MM, got ${JSON.stringify(month)}`);
  const now = store.now();
  if (month >= now.slice(0, 7)) throw new ApprovalError(`month ${month} is not closed yet: only a month before ${now.slice(0, 7)} can be approved`);
  return store.transaction(async (trx) => {
    const done = (await trx('commission_approvals').where({ affiliate_id: affiliate, month }).first('approved_at', 'approved_by')) as { approved_at: unknown; approved_by: string } | undefined;
    if (done) throw new ApprovalError(`the ${month} commission of affiliate ${affiliate} is approved already (by ${done.approved_by})`);
    const rows = (await trx('commission_ledger').where({ affiliate_id: affiliate, period: month }).select('amount_usd')) as { amount_usd: unknown }[];
    if (rows.length === 0) throw new ApprovalError(`affiliate ${affiliate} has no commission lines in ${month}`);
    // Cents as integers: the ledger's amounts are whole cents.
    const cents = rows.reduce((sum, r) => sum + BigInt(Math.round(Number(r.amount_usd) * 100)), 0n);
    const sign = cents < 0n ? '-' : '';
    const abs = cents < 0n ? -cents : cents;
    const net = `${sign}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`;
    const approval: Approval = { affiliate, month, net_usd: net, lines: rows.length, approved_by: by, approved_at: now };
    await trx('commission_approvals').insert({ affiliate_id: affiliate, month, net_usd: net, lines: rows.length, approved_by: by, approved_at: now });
    await writeEvents(trx, [{
      kind: 'commission_approved', key: `commission_approved|${affiliate}|${month}`, orderKey: `${affiliate}|${month}`,
      values: { affiliate_id: affiliate, month, amount: net, currency: 'USD', amount_usd: net },
    }], await definitionsFor(trx, [affiliate]), now);
    return approval;
  });
}
