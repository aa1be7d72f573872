/**
 * The deliverer as the long-running faces start it (`worker` and `serve`: the same code, so
 * either, or both, or several of each on one PostgreSQL store, deliver). Settings come from the
 * environment (POSTBACK_SECRET_KEY, POSTBACK_* of ./deliverer.ts); a bad setting is an error
 * naming its variable. Without a key nothing is delivered, and that is said once if any postback
 * is waiting for it.
 */
import type { Logger } from '../log.js';
import type { MetricsRegistry } from '../metrics.js';
import type { Store } from '../store/store.js';
import { listPostbacks } from './definitions.js';
import { Deliverer, deliveryMetrics, deliveryOptionsFromEnv } from './deliverer.js';
import { SECRET_KEY_ENV, secretKeyFromEnv } from './secret.js';

export async function startPostbackDelivery(store: Store, logger: Logger, env: NodeJS.ProcessEnv, registry?: MetricsRegistry): Promise<Deliverer | undefined> {
  const options = deliveryOptionsFromEnv(env);
  if (!env[SECRET_KEY_ENV] && !env[`${SECRET_KEY_ENV}_FILE`]) {
    const defined = await listPostbacks(store.knex);
    if (defined.length > 0) logger.warn(`postbacks: ${defined.length} postback(s) defined but ${SECRET_KEY_ENV} is not set: their events wait in the store until a process with the key delivers them`, { event: 'postbacks_no_key' });
    return undefined;
  }
  const deliverer = new Deliverer({ store, logger, secretKey: secretKeyFromEnv(env), options, metrics: registry ? deliveryMetrics(registry) : undefined });
  deliverer.start();
  logger.info('postbacks: delivering', { event: 'postbacks_delivering', poll_ms: options.pollMs, timeout_ms: options.timeoutMs });
  return deliverer;
}
