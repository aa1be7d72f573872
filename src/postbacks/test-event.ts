/**
 * One signed test event to a postback's tracker now (`partner-sync postbacks test`, the console's
 * Test buttons): the same signing, SSRF guard and time limit as a delivery, outside the outbox.
 */
import { randomUUID } from 'node:crypto';
import type { Store } from '../store/store.js';
import type { PostbackDefinition } from './definitions.js';
import { DEFAULT_DELIVERY } from './deliverer.js';
import { deriveSecret } from './secret.js';
import { sendEvent } from './send.js';

export async function sendTestEvent(store: Store, def: PostbackDefinition, secretKey: string): Promise<{ eventId: string; delivered: boolean; status: number | null; error: string | null; ms: number }> {
  const eventId = randomUUID();
  const data = { affiliate_id: def.affiliateId, campaign_id: def.campaignId, customer_id: 'test-customer', click_id: 'test-click', transaction_id: 'test-transaction', amount: '1.00', currency: 'USD' };
  const result = await sendEvent(def, deriveSecret(secretKey, def.secretSalt), { eventId, kind: 'test', occurredAt: store.now(), data }, DEFAULT_DELIVERY.timeoutMs, () => Math.floor(store.clock().getTime() / 1000));
  return { eventId, ...result };
}
