/**
 * The optional alert webhook: each freshness breach (and its recovery) is POSTed as JSON, so
 * that someone knows before an affiliate does. The URL often carries a token (chat webhooks do),
 * so it comes from the environment (`ALERT_WEBHOOK_URL`, or a file named by
 * `ALERT_WEBHOOK_URL_FILE`), never from the command line, and is redacted from every log line.
 */
import { readFileSync } from 'node:fs';
import type { Logger } from '../log.js';
import { isLoopbackHost } from '../config/secure-url.js';

export type { AlertEvent, Alerter } from '../alerts/router.js';
import type { AlertEvent, Alerter } from '../alerts/router.js';

/** The webhook URL from the environment, or undefined; throws naming the variable when unusable. */
export function webhookUrlFromEnv(env: NodeJS.ProcessEnv): string | undefined {
  let url = env.ALERT_WEBHOOK_URL?.trim();
  if (!url && env.ALERT_WEBHOOK_URL_FILE) {
    try {
      url = readFileSync(env.ALERT_WEBHOOK_URL_FILE, 'utf8').trim();
    } catch (error) {
      throw new Error(`ALERT_WEBHOOK_URL_FILE: cannot read ${env.ALERT_WEBHOOK_URL_FILE}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { cause: error });
    }
  }
  if (!url) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error('ALERT_WEBHOOK_URL is not a URL');
  }
  const loopback = isLoopbackHost(parsed.hostname);
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && loopback)) {
    throw new Error('ALERT_WEBHOOK_URL must be https:// (plain http only to this machine)');
  }
  return url;
}

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
