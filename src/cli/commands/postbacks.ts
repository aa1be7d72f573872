/**
 * `partner-sync postbacks add|list|remove|test|log|replay`: postbacks to affiliates' trackers
 * (docs/postbacks.md). `add` checks the URL (scheme, macros, personal data, destination) and
 * prints the signing secret once (the store keeps only a salt; the secret is derived with
 * POSTBACK_SECRET_KEY). `test` sends one signed test event now and reports the answer. `log`
 * shows delivery state per event; `replay` makes dead (or named) events due again.
 */
import { replay, listEvents, type EventRow } from '../../postbacks/claims.js';
import { ApprovalError, approveMonth } from '../../postbacks/approvals.js';
import { addPostback, getPostback, listPostbacks, PostbackDefinitionError, removePostback, type NewPostback, type PostbackDefinition } from '../../postbacks/definitions.js';
import { secretKeyFromEnv } from '../../postbacks/secret.js';
import { sendTestEvent } from '../../postbacks/test-event.js';
import { withStore, type GlobalOptions } from '../context.js';
import { CliError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, type Io } from '../io.js';
import { formatTable } from '../table.js';


function secretKey(env: NodeJS.ProcessEnv): string {
  try {
    return secretKeyFromEnv(env);
  } catch (error) {
    throw new CliError((error as Error).message, EXIT_USAGE);
  }
}

export const postbackJson = (p: PostbackDefinition) => ({
  id: p.id, affiliate: p.affiliateId, campaign: p.campaignId, events: p.events, method: p.method, url: p.url,
  include_personal: p.includePersonal, allow_private: p.allowPrivate, rate_per_second: p.ratePerSecond, created_at: p.createdAt, removed_at: p.removedAt,
});

export type PostbacksAddOptions = Omit<NewPostback, 'ratePerSecond'> & { rate?: number };

export async function postbacksAddCommand(globals: GlobalOptions, opts: PostbacksAddOptions, io: Io, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const key = secretKey(env);
  return withStore(globals, async (store) => {
    let added;
    try {
      added = await addPostback(store, { ...opts, ratePerSecond: opts.rate }, key);
    } catch (error) {
      if (error instanceof PostbackDefinitionError) throw new CliError(`cannot add the postback: ${error.message}`, EXIT_USAGE);
      throw error;
    }
    const { postback, secret } = added;
    if (globals.json) {
      io.out(JSON.stringify({ ...postbackJson(postback), secret }));
      return EXIT_OK;
    }
    io.out(`postback ${postback.id}: ${postback.method} ${postback.url}`);
    io.out(`affiliate ${postback.affiliateId}${postback.campaignId ? `, campaign ${postback.campaignId}` : ''}; events ${postback.events.join(', ')}`);
    io.out(`secret: ${secret}`);
    io.out('The secret is shown only now: the tracker verifies X-Partner-Sync-Signature with it (docs/postbacks.md).');
    return EXIT_OK;
  });
}

export async function postbacksListCommand(globals: GlobalOptions, opts: { affiliate?: string; removed?: boolean }, io: Io): Promise<number> {
  return withStore(globals, async (store) => {
    const list = await listPostbacks(store.knex, opts);
    if (globals.json) {
      io.out(JSON.stringify(list.map(postbackJson)));
      return EXIT_OK;
    }
    if (list.length === 0) {
      io.out('no postbacks (partner-sync postbacks add --affiliate ID --events ftd --url URL adds one)');
      return EXIT_OK;
    }
    io.out(formatTable(['ID', 'AFFILIATE', 'CAMPAIGN', 'EVENTS', 'METHOD', 'URL', 'PERSONAL', 'RATE/S', 'REMOVED'],
      list.map((p) => [p.id, p.affiliateId, p.campaignId ?? '', p.events.join(','), p.method, p.url, p.includePersonal ? 'yes' : 'no', String(p.ratePerSecond), p.removedAt?.slice(0, 19) ?? ''])));
    return EXIT_OK;
  });
}

export async function postbacksRemoveCommand(globals: GlobalOptions, opts: { id: string }, io: Io): Promise<number> {
  return withStore(globals, async (store) => {
    const result = await removePostback(store, opts.id);
    if (!result.removed) throw new CliError(`no postback ${opts.id} (partner-sync postbacks list shows them)`, EXIT_USAGE);
    if (globals.json) io.out(JSON.stringify({ id: opts.id, removed: true, unsent_settled: result.settled }));
    else io.out(`postback ${opts.id} removed${result.settled > 0 ? `; ${result.settled} unsent event(s) will not be sent` : ''}`);
    return EXIT_OK;
  });
}

/** One signed `test` event, sent now through the same code as deliveries; exit 1 unless the tracker answers 2xx. */
export async function postbacksTestCommand(globals: GlobalOptions, opts: { id: string }, io: Io, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const key = secretKey(env);
  return withStore(globals, async (store) => {
    const def = await getPostback(store.knex, opts.id);
    if (!def || def.removedAt !== null) throw new CliError(`no postback ${opts.id} (partner-sync postbacks list shows them)`, EXIT_USAGE);
    const { eventId, ...result } = await sendTestEvent(store, def, key);
    if (globals.json) io.out(JSON.stringify({ id: def.id, event_id: eventId, delivered: result.delivered, status: result.status, error: result.error, ms: result.ms }));
    else io.out(result.delivered ? `test event ${eventId} delivered: HTTP ${result.status} in ${result.ms} ms` : `test event ${eventId} NOT delivered: ${result.error ?? ''}`);
    return result.delivered ? EXIT_OK : EXIT_FAILURE;
  });
}


export const eventJson = (e: EventRow) => ({ ...e });

export async function postbacksLogCommand(globals: GlobalOptions, opts: { postback?: string; state?: string; customer?: string; limit?: number }, io: Io): Promise<number> {
  return withStore(globals, async (store) => {
    const events = await listEvents(store.knex, { postbackId: opts.postback, state: opts.state, customer: opts.customer, limit: opts.limit });
    if (globals.json) {
      io.out(JSON.stringify(events.map(eventJson)));
      return EXIT_OK;
    }
    if (events.length === 0) {
      io.out('no postback events');
      return EXIT_OK;
    }
    io.out(formatTable(['EVENT_ID', 'POSTBACK', 'EVENT', 'CUSTOMER', 'STATE', 'ATTEMPTS', 'STATUS', 'CREATED', 'DELIVERED / NEXT', 'ERROR'],
      events.map((e) => [e.event_id, e.postback_id, e.kind, e.customer_id ?? '', e.state, String(e.attempts), e.last_status === null ? '' : String(e.last_status),
        e.created_at.slice(0, 19), (e.delivered_at ?? e.next_attempt_at ?? '').slice(0, 19), e.state === 'delivered' ? '' : (e.last_error ?? '')])));
    return EXIT_OK;
  });
}

export async function postbacksReplayCommand(globals: GlobalOptions, opts: { eventIds: string[]; postback?: string; dead?: boolean }, io: Io): Promise<number> {
  if (opts.eventIds.length === 0 && !opts.dead) throw new CliError('name event ids, or give --dead (with --postback ID for one postback) to replay dead events', EXIT_USAGE);
  return withStore(globals, async (store) => {
    const n = await replay(store, { eventIds: opts.eventIds.length > 0 ? opts.eventIds : undefined, postbackId: opts.postback, dead: opts.dead });
    if (opts.eventIds.length > 0 && n < opts.eventIds.length) {
      const found = new Set((await store.knex('postback_events').whereIn('event_id', opts.eventIds).select('event_id') as { event_id: string }[]).map((r) => r.event_id));
      const missing = opts.eventIds.filter((id) => !found.has(id));
      if (missing.length > 0) throw new CliError(`no postback event ${missing.join(', ')} (partner-sync postbacks log shows them); ${n} replayed`, EXIT_USAGE);
    }
    if (globals.json) io.out(JSON.stringify({ replayed: n }));
    else io.out(`${n} event(s) due again now, with the same event id (the worker or serve sends them)`);
    return EXIT_OK;
  });
}

/** `commissions approve`: a closed month of one affiliate approved, once (announced by the `commission_approved` postback). */
export async function commissionsApproveCommand(globals: GlobalOptions, opts: { affiliate?: string; month?: string; by?: string }, io: Io): Promise<number> {
  const { affiliate, month } = opts;
  if (!affiliate || !month) throw new CliError('commissions approve needs --affiliate ID and --month YYYY-MM', EXIT_USAGE);
  return withStore(globals, async (store) => {
    let approval;
    try {
      approval = await approveMonth(store, affiliate, month, opts.by ?? (process.env.USER || 'cli'));
    } catch (error) {
      if (error instanceof ApprovalError) throw new CliError(error.message, EXIT_USAGE);
      throw error;
    }
    if (globals.json) io.out(JSON.stringify(approval));
    else io.out(`approved: affiliate ${approval.affiliate}, ${approval.month}, net ${approval.net_usd} USD over ${approval.lines} ledger line(s)`);
    return EXIT_OK;
  });
}
