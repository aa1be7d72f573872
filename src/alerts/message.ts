/**
 * What an alert says: a condition (a kind, for a partner and stream, with what is wrong in names
 * and numbers), and the message each channel renders from it: its title, what to run next and
 * a link to the console page that shows it. Details never carry a personal value (counts and
 * record kinds, not customers), and every text passes the log redactor, and a URL loses its query
 * (a token often rides in it) before it leaves.
 */
import type { AlertKind } from './config.js';

export interface Condition {
  kind: AlertKind;
  /** `-` for the whole service (the store, the FX feed). */
  partner: string;
  /** `-` when no one stream. */
  stream: string;
  detail: string;
}

export type MessageStatus = 'started' | 'ongoing' | 'ended' | 'test';

export interface AlertMessage {
  source: 'partner-sync';
  /** The kind on start and repeat; the event of its end (`freshness_recovered`, `run_failed_ended`). */
  event: string;
  kind: AlertKind;
  status: MessageStatus;
  partner: string;
  stream: string;
  title: string;
  detail: string;
  next: string;
  console_url?: string;
  /** When the condition started. */
  since: string;
  at: string;
  /** Starts not sent since the last message, the condition flapping. */
  flaps: number;
  /** One line: status, title, detail. */
  text: string;
}

const TITLES: Record<AlertKind, string> = {
  run_failed: 'runs failing',
  run_held: 'run held by a guard',
  postbacks_dead: 'postback events dead',
  unevaluated: 'loaded records not evaluated',
  freshness_breach: 'freshness breach',
  reconcile_difference: 'reconcile difference',
  fx_rate_missing: 'FX rate missing',
  fx_feed_failed: 'FX feed failing',
  store_outage: 'store not answering',
  deletes_held: 'deletes held by the mass-delete guard',
};

/** The end events the generic webhook has always sent. */
const ENDED_EVENT: Partial<Record<AlertKind, string>> = { freshness_breach: 'freshness_recovered', fx_feed_failed: 'fx_feed_recovered', reconcile_difference: 'reconcile_clean' };

const STATUS_WORD: Record<MessageStatus, string> = { started: 'ALERT', ongoing: 'STILL', ended: 'RESOLVED', test: 'TEST' };

const PAGES: Record<AlertKind, string> = {
  run_failed: '/console/runs',
  run_held: '/console/rejects',
  postbacks_dead: '/console/postbacks',
  unevaluated: '/console/partners',
  freshness_breach: '/console/partners',
  reconcile_difference: '/console/partners',
  fx_rate_missing: '/console/commissions',
  fx_feed_failed: '/console/commissions',
  store_outage: '/console',
  deletes_held: '/console/partners',
};

/** What to run next, per kind: the command that shows the cause, then the one that fixes it. */
export function nextStep(c: Pick<Condition, 'kind' | 'partner' | 'stream'>): string {
  const p = c.partner;
  const s = c.stream !== '-' ? ` --stream ${c.stream}` : '';
  switch (c.kind) {
    case 'run_failed':
      return `partner-sync status --partner ${p} (the error), then partner-sync run ${p}${s}`;
    case 'run_held':
      return `partner-sync rejects ${p}${s} (the reasons); fix the definition or the source, then partner-sync run ${p}${s} (a day that really shrank: --allow-shrink)`;
    case 'postbacks_dead':
      return 'partner-sync postbacks log --state dead (why they died); fix the tracker, then partner-sync postbacks replay --dead';
    case 'unevaluated':
      return `partner-sync status --partner ${p}; the next loading command or the worker evaluates them (its log names a failed evaluation)`;
    case 'freshness_breach':
      return `partner-sync status --partner ${p} --check, then partner-sync run ${p}${s}`;
    case 'reconcile_difference':
      return `partner-sync reconcile ${p} (the days and records), then partner-sync backfill ${p} --from DAY --to DAY${s}`;
    case 'fx_rate_missing':
    case 'fx_feed_failed':
      return 'partner-sync fx fetch (the configured feed), or partner-sync fx import FILE.csv';
    case 'store_outage':
      return "check the store's server; partner-sync status --check answers when it is back (held ticks run by themselves)";
    case 'deletes_held':
      return `partner-sync deletes list --partner ${p}, then partner-sync deletes apply ID (or discard ID)`;
  }
}

/** A URL keeps its scheme, host and path: its query and fragment (tokens, personal values) go. */
export const withoutQueries = (text: string): string => text.replace(/(\bhttps?:\/\/[^\s?#"']+)[?#][^\s"']*/g, '$1?…');

export function composeMessage(c: Condition, o: { status: MessageStatus; since: Date; at: Date; flaps: number; consoleUrl?: string; redact: (text: string) => string }): AlertMessage {
  const clean = (text: string) => withoutQueries(o.redact(text));
  const where = c.partner === '-' ? '' : `: ${c.partner}${c.stream === '-' ? '' : `/${c.stream}`}`;
  const title = `${STATUS_WORD[o.status]} ${TITLES[c.kind]}${where}`;
  const detail = clean(o.status === 'ended' ? `${c.detail} (since ${o.since.toISOString()})` : c.detail);
  const next = clean(nextStep(c));
  const event = o.status === 'ended' ? ENDED_EVENT[c.kind] ?? `${c.kind}_ended` : c.kind;
  const flapped = o.flaps > 0 ? ` (started ${o.flaps} more time(s) since the last message: flapping)` : '';
  return {
    source: 'partner-sync',
    event,
    kind: c.kind,
    status: o.status,
    partner: c.partner,
    stream: c.stream,
    title,
    detail: detail + flapped,
    next,
    ...(o.consoleUrl ? { console_url: `${o.consoleUrl}${PAGES[c.kind]}` } : {}),
    since: o.since.toISOString(),
    at: o.at.toISOString(),
    flaps: o.flaps,
    text: `partner-sync ${title}: ${detail}${flapped}`,
  };
}
