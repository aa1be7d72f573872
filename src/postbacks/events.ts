/**
 * What a postback says: the event kinds, the values an event carries, and how a URL template's
 * macros are filled. The kinds are facts about one customer (or one affiliate month), each with a
 * fact key that names the fact itself, never the record that brought it: the same fact arriving
 * again (a re-send, a replay, a backfill) has the same key and fires nothing new.
 *
 * Glossary: FTD = first-time deposit (the customer's first approved deposit, the CPA trigger);
 * CPA = the fixed commission on a qualified FTD; clawback = a CPA taken back because its deposit
 * was undone; phase = a prop-trading customer's evaluation stage (phase_1, phase_2, funded, failed).
 */

export const EVENT_KINDS = [
  'registration',
  'ftd',
  'deposit',
  'deposit_reversed',
  'cpa_qualified',
  'cpa_clawback',
  'challenge_purchase',
  'phase_change',
  'commission_approved',
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

export const isEventKind = (value: string): value is EventKind => (EVENT_KINDS as readonly string[]).includes(value);

/** The values an event carries (absent ones are sent as empty macros and left out of a JSON body). */
export interface EventValues {
  partner_id?: string;
  customer_id?: string;
  affiliate_id: string;
  campaign_id?: string | null;
  click_id?: string | null;
  transaction_id?: string;
  transaction_type?: string;
  amount?: string;
  currency?: string;
  amount_usd?: string | null;
  phase?: string;
  previous_phase?: string | null;
  plan_id?: string;
  month?: string;
  country_code?: string | null;
  /** The time of the fact as the record tells it (a transaction date, a signup date), when it does. */
  fact_at?: string | null;
  /** Personal data: only kept and sent for a postback that includes it. */
  first_name?: string | null;
  last_name?: string | null;
  email?: string | null;
}

export const PERSONAL_FIELDS = ['first_name', 'last_name', 'email'] as const;

/** A fact that happened, before it is matched to the postbacks that want it. */
export interface Fact {
  kind: EventKind;
  /** Unique per fact: `ftd|partner|customer`, `deposit|partner|transaction`... */
  key: string;
  /** Events of one order key are sent in order (a customer's). */
  orderKey: string;
  values: EventValues;
}

/** The macros a URL may carry: every value name plus the event's own. */
export const MACROS = ['event', 'event_id', 'occurred_at', 'partner_id', 'customer_id', 'affiliate_id', 'campaign_id', 'click_id', 'transaction_id',
  'transaction_type', 'amount', 'currency', 'amount_usd', 'phase', 'previous_phase', 'plan_id', 'month', 'country_code', 'fact_at', ...PERSONAL_FIELDS] as const;

const MACRO = /\{([a-z_]+)\}/g;

/** The macro names a template uses, in order of appearance. */
export function macrosOf(template: string): string[] {
  return [...template.matchAll(MACRO)].map((m) => m[1] as string);
}

/** The body or query values of one event as sent: its values plus its identity. */
export type EventMessage = Record<string, string>;

export function messageOf(kind: string, eventId: string, occurredAt: string, values: Record<string, unknown>): EventMessage {
  const out: EventMessage = { event: kind, event_id: eventId, occurred_at: occurredAt };
  for (const [k, v] of Object.entries(values)) if (v !== null && v !== undefined && v !== '') out[k] = String(v);
  return out;
}

/** Fills a URL template: each macro by its value, URL-encoded; an absent value by nothing. */
export function fillTemplate(template: string, message: EventMessage): string {
  return template.replace(MACRO, (_, name: string) => encodeURIComponent(message[name] ?? ''));
}
