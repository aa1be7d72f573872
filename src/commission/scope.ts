/**
 * What a committed load touched, as the engine's scope: the customers of its customer records
 * and transactions, the customer-days of its activity and bonus transactions, the activity days
 * it replaced. Only these are re-evaluated, so a batch's cost follows the batch, not the history.
 */
import type { LoadedChange } from '../pipeline/load.js';
import { utcDay } from '../kernel/dates.js';
import { addDay, emptyScope, type Scope } from './engine.js';

export function scopeOfChange(change: LoadedChange): Scope {
  const scope = emptyScope(change.partner, change.variant, change.runId);
  for (const c of change.records.customers) {
    const id = String(c.customer_id);
    scope.customers.add(id);
    scope.customerRecords.add(id);
  }
  for (const t of change.records.transactions) {
    const id = String(t.customer_id);
    scope.customers.add(id);
    // A bonus moves NGR of its customer-day when the activity carries no ngr.
    if (t.transaction_type === 'bonus') addDay(scope, id, utcDay(String(t.transaction_date)));
  }
  for (const a of change.records.activity) addDay(scope, String(a.customer_id), String(a.date));
  for (const d of change.replacedDays) scope.replacedDays.add(d);
  return scope;
}
