/**
 * The optional alert webhook: each freshness breach (and its recovery) is POSTed as JSON, so
 * that someone knows before an affiliate does. The URL often carries a token (chat webhooks do),
 * so it comes from the environment (`ALERT_WEBHOOK_URL`, or a file named by
 * `ALERT_WEBHOOK_URL_FILE`), never from the command line, and is redacted from every log line.
 */
import type { Logger } from '../log.js';

export { webhookUrlFromEnv } from '../alerts/config.js';

export type { AlertEvent, Alerter } from '../alerts/router.js';
import type { AlertEvent, Alerter } from '../alerts/router.js';

const TEXT: Partial<Record<AlertEvent['event'], string>> = { freshness_breach: 'BREACH', reconcile_difference: 'RECONCILE DIFFERENCE', deletes_held: 'DELETES HELD', fx_feed_failed: 'FX FEED FAILED', store_outage: 'STORE NOT ANSWERING' };

/** One generic webhook for the events as they come (config/alerts.yaml's router is what the worker uses). */
export function webhookAlerter(url: string, options: { logger: Logger; timeoutMs?: number; fetch?: typeof fetch }): Alerter {
  const doFetch = options.fetch ?? fetch;
  return {
    async send(event) {
      try {
        const res = await doFetch(url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ source: 'partner-sync', ...event, text: `partner-sync ${TEXT[event.event] ?? 'recovered'}: ${event.partner}/${event.stream}: ${event.detail}` }),
          signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
        });
        if (!res.ok) options.logger.warn(`alert webhook answered ${res.status}`, { partner: event.partner, stream: event.stream, alert: event.event });
        await res.body?.cancel().catch(() => undefined);
      } catch (error) {
        options.logger.warn(`alert webhook failed: ${(error as Error).message}`, { partner: event.partner, stream: event.stream, alert: event.event });
      }
    },
  };
}
