/**
 * The deliverer as the long-running faces start it (`worker` and `serve`: the same code, so
 * either, or both, or several of each on one PostgreSQL store, deliver). Settings come from the
 * environment (POSTBACK_SECRET_KEY, POSTBACK_* of ./deliverer.ts); a bad setting is an error
 * naming its variable. Without a key nothing is delivered, and that is said once if any postback
 * is waiting for it. On a PostgreSQL store the deliverer runs on a thread of its own
 * (./delivery-thread.ts), off the event loop that answers pushes; on SQLite, with its single
 * writer, it runs in this thread.
 */
import type { Logger } from '../log.js';
import type { MetricsRegistry } from '../metrics.js';
import type { Store } from '../store/store.js';
import { listPostbacks } from './definitions.js';
import { Deliverer, deliveryMetrics, deliveryOptionsFromEnv } from './deliverer.js';
import { startDeliveryThread, type Delivery } from './delivery-thread.js';
import { SECRET_KEY_ENV, secretKeyFromEnv } from './secret.js';

export async function startPostbackDelivery(store: Store, logger: Logger, env: NodeJS.ProcessEnv, registry?: MetricsRegistry): Promise<Delivery | undefined> {
  const options = deliveryOptionsFromEnv(env);
  if (!env[SECRET_KEY_ENV] && !env[`${SECRET_KEY_ENV}_FILE`]) {
    const defined = await listPostbacks(store.knex);
    if (defined.length > 0) logger.warn(`postbacks: ${defined.length} postback(s) defined but ${SECRET_KEY_ENV} is not set: their events wait in the store until a process with the key delivers them`, { event: 'postbacks_no_key' });
    return undefined;
  }
  const secretKey = secretKeyFromEnv(env);
  const metrics = registry ? deliveryMetrics(registry) : undefined;
  let delivery: Delivery;
  // A thread of its own, on connections of its own, where the store takes several at once (PostgreSQL).
  if (store.dialect.concurrent) {
    delivery = await startDeliveryThread({ url: store.location.target, secretKey, options, debug: logger.isDebugEnabled() }, logger, metrics);
  } else {
    const deliverer = new Deliverer({ store, logger, secretKey, options, metrics });
    deliverer.start();
    delivery = deliverer;
  }
  logger.info('postbacks: delivering', { event: 'postbacks_delivering', poll_ms: options.pollMs, timeout_ms: options.timeoutMs, thread: store.dialect.concurrent });
  return delivery;
}
