import { replayRejects } from '../../../jobs/replay-rejects.js';
import { cliLoader } from '../loader.js';
import { discardRejects } from '../../store/reject-lifecycle.js';
import { listRejects, type StoredReject } from '../../store/rejects.js';
import { fromStoreTimestamp } from '../../store/values.js';
import { DateTimeError, parseDateTime } from '../../kernel/timestamp.js';
import { isFullDate } from '../../spec/date-format.js';
import type { Entity } from '../../types.js';
import { osUser, withStore, type GlobalOptions } from '../context.js';
import { loadConfig } from '../definitions.js';
import { CliError, EXIT_OK, type Io } from '../io.js';
import { formatTable } from '../table.js';

export interface RejectsArgs {
  partner: string;
  replay?: boolean;
  all?: boolean;
  discard?: boolean;
  before?: string;
  reason?: string;
  stream?: Entity;
  limit?: number;
}

/** The payload as JSON when it is JSON (a record), else the raw text (a line that never parsed). */
function parsedPayload(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** `--before`: a calendar date (its UTC midnight) or an RFC 3339 date-time with offset (the rules of every date-time the service reads), as store time. */
function beforeInstant(value: string): string {
  const text = isFullDate(value) ? `${value}T00:00:00Z` : value;
  try {
    return parseDateTime(text);
  } catch (error) {
    const why = error instanceof DateTimeError ? ` (${error.reason})` : '';
    throw new CliError(`--before must be a date YYYY-MM-DD or an RFC 3339 date-time with offset such as 2026-11-23T10:00:00Z, got ${JSON.stringify(value)}${why}`);
  }
}

function usage(args: RejectsArgs): void {
  const modes = [args.replay && '--replay', args.discard && '--discard', args.all && '--all'].filter(Boolean);
  if (modes.length > 1) throw new CliError(`${modes.join(' and ')} cannot be combined`);
  if (args.discard && (args.reason === undefined || args.reason.trim() === '')) {
    throw new CliError('--discard needs --reason TEXT: why these rejects are closed (kept for audit)');
  }
  if (!args.discard) {
    for (const [flag, value] of [['--reason', args.reason], ['--before', args.before]] as const) {
      if (value !== undefined) throw new CliError(`${flag} goes with --discard`);
    }
  }
}

const when = (value: unknown) => (fromStoreTimestamp(value) ?? '').slice(0, 19).replace('T', ' ');

function rejectJson(r: StoredReject): Record<string, unknown> {
  return {
    id: r.id, stream: r.entity, position: r.position, run_id: r.run_id, origin: r.origin,
    first_seen_at: fromStoreTimestamp(r.first_seen_at), last_seen_at: fromStoreTimestamp(r.last_seen_at),
    errors: r.errors, payload: parsedPayload(r.payload),
    status: r.status, record_key: r.record_key, resolution: r.resolution, resolved_at: fromStoreTimestamp(r.resolved_at),
    resolved_run_id: r.resolved_run_id, resolved_by: r.resolved_by, reason: r.resolution_reason,
  };
}

/** How a resolved reject was closed, in a word or three. */
function closedHow(r: StoredReject): string {
  if (r.status === 'open') return 'open';
  const at = when(r.resolved_at);
  return r.resolution === 'discarded' ? `discarded ${at} by ${r.resolved_by ?? '?'}: ${r.resolution_reason ?? ''}` : `${r.resolution ?? 'resolved'} ${at}`;
}

/**
 * `rejects <partner> [--replay | --all | --discard --reason TEXT [--before DATE]] [--stream S] [--limit N]`:
 * open rejects with reasons; replay after a fix; resolved ones too (--all); close them deliberately (--discard).
 */
export async function rejectsCommand(globals: GlobalOptions, args: RejectsArgs, io: Io): Promise<number> {
  usage(args);
  const before = args.before === undefined ? undefined : beforeInstant(args.before);
  const config = await loadConfig(globals);
  // Replay maps pulled records with the partner's current definition, when it has a valid one.
  const def = config.definitions.find((d) => d.partner === args.partner);
  return withStore(globals, async (store) => {
    if (args.replay) {
      const loader = await cliLoader(globals, io, store, config.logger);
      const results = await replayRejects(loader, args.partner, def, args.stream);
      if (globals.json) io.out(JSON.stringify({ partner: args.partner, replay: results }));
      else if (results.length === 0) io.out(`${args.partner}: no open rejects to replay`);
      else {
        io.out(formatTable(['STREAM', 'REPLAYED', 'LOADED', 'WAITING', 'SUPERSEDED', 'STILL REJECTED', 'RUN'],
          results.map((r) => [r.entity, r.replayed, r.counts.loaded, r.counts.waiting, r.superseded, r.stillRejected, r.runId])));
        if (results.some((r) => r.superseded > 0)) io.out('superseded: valid, but older than the version of the record already stored; closed, not applied');
      }
      return EXIT_OK;
    }
    if (args.discard) {
      const discarded = await discardRejects(store.knex, {
        partner: args.partner, entity: args.stream, before, reason: (args.reason as string).trim(), by: osUser(), now: store.now(),
      });
      if (globals.json) io.out(JSON.stringify({ partner: args.partner, discarded, stream: args.stream ?? null, before: before ?? null }));
      else io.out(`${args.partner}: ${discarded} open reject${discarded === 1 ? '' : 's'} discarded${args.stream ? ` (${args.stream})` : ''}${before ? `, last seen before ${before}` : ''}; kept for audit: partner-sync rejects ${args.partner} --all`);
      return EXIT_OK;
    }
    const rejects = await listRejects(store.knex, { partner: args.partner, status: args.all ? undefined : 'open', entity: args.stream, limit: args.limit });
    if (globals.json) {
      io.out(JSON.stringify({ partner: args.partner, rejects: rejects.map(rejectJson) }));
      return EXIT_OK;
    }
    if (rejects.length === 0) {
      io.out(`${args.partner}: no ${args.all ? '' : 'open '}rejects`);
      return EXIT_OK;
    }
    if (args.all) {
      io.out(formatTable(['ID', 'STREAM', 'SEEN', 'FIELD', 'RULE', 'MESSAGE', 'STATUS'],
        rejects.flatMap((r) => r.errors.map((e) => [r.id, r.entity, when(r.last_seen_at), e.field, e.rule, e.message, closedHow(r)]))));
      const open = rejects.filter((r) => r.status === 'open').length;
      io.out(`${open} open, ${rejects.length - open} resolved rejects`);
      return EXIT_OK;
    }
    io.out(formatTable(['ID', 'STREAM', 'SEEN', 'FIELD', 'RULE', 'MESSAGE'],
      rejects.flatMap((r) => r.errors.map((e) => [r.id, r.entity, when(r.last_seen_at), e.field, e.rule, e.message]))));
    io.out(`${rejects.length} open rejects; fix the cause, then: partner-sync rejects ${args.partner} --replay (or close them: --discard --reason TEXT)`);
    return EXIT_OK;
  });
}
