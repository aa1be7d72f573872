/**
 * A fraud flag decided (confirmed or dismissed), then its partner's commission evaluated at once:
 * the decision puts the flag's customers in the commission job's pending scope (in the decision's
 * own transaction, so a crash in between loses nothing), and this evaluation books what that
 * means (held commission voided or released) without waiting for the partner's next load. The CLI
 * (`fraud confirm|dismiss`) and the web console both decide through here.
 */
import type { Plan } from '../src/commission/plans.js';
import { decideFlag, type Decision, type Flag } from '../src/fraud/flags.js';
import type { Logger } from '../src/log.js';
import type { Store } from '../src/store/store.js';
import { evaluatePartner } from './commission.js';

export async function decideAndEvaluate(
  store: Store, plans: readonly Plan[], logger: Logger,
  decision: { id: number; decision: Decision; by: string; reason: string },
): Promise<Flag> {
  const flag = await decideFlag(store, decision.id, decision.decision, decision.by, decision.reason);
  await evaluatePartner(store, plans, flag.partner_id, flag.variant, `fraud-decision-${decision.id}-${store.now()}`, logger);
  return flag;
}
