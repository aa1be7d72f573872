/**
 * Group commit: pushed requests of one partner and entity that arrive close together are written
 * by ONE Loader transaction (the load path every source uses: validation, upsert, parking,
 * release, the after-load jobs), and each request is answered once that transaction has
 * committed, with its own counts. A single-record POST under load therefore never costs a
 * transaction of its own.
 *
 * Rules kept:
 * - A request's records are never split over two transactions (all-or-nothing per request).
 * - The grouped requests are ONE batch of the load path, their records in arrival order: a key
 *   sent by two grouped requests ends as the later one left it, as if they had come one by one.
 *   Each request's counts come from the records that are its own (accepted = loaded + waiting +
 *   stale; a record superseded by a newer version of its key, in the store or in a later request
 *   of the same group, is stale).
 * - While a group's transaction runs, new arrivals gather for the next one; an idle group waits
 *   `maxWaitMs` for company, and flushes at once when `maxRecords` records are waiting.
 * - Bulk requests already being received (announced by the route before their body is read, see
 *   `announce`) are waited for before a group is written: each transaction pays fixed costs (the
 *   after-load jobs recompute every day the batch touches) that a bigger group shares. So are the
 *   next requests of the senders of the bulk requests the last transaction answered (a partner's
 *   parallel uploaders send again as soon as they are answered; without this, uploaders answered
 *   together and those queued behind them would alternate in two half-size groups for good). The
 *   wait ends when they have all arrived, when `maxRecords` is reached, or after a quarter of the
 *   stream's last transaction time (at most `maxHoldMs`), whichever comes first.
 * - If a grouped transaction fails, each of its requests is retried alone, so one request's
 *   failure is not its neighbours'.
 * - A request is answered at its commit. The jobs that can wait (fraud rules, commissions) record
 *   the transaction's scope in it and evaluate right after, behind the answers
 *   (Loader.evaluateBehind): one evaluation per partner at a time, over what committed meanwhile.
 *   Report facts, the phase history and the postbacks' outbox are written in the transaction.
 * - `close()` flushes what is queued and waits for it and for the evaluations behind it (a
 *   stopping server commits in-flight work).
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { AfterCommitError, type Loader } from '../pipeline/load.js';
import { Run } from '../pipeline/run.js';
import type { Logger } from '../log.js';
import { activeSpanContext, inSpan, type SpanContext } from '../trace.js';
import type { Entity, Variant } from '../types.js';
import { purgeExpiredAnswers, saveAnswer, touchPushStream } from './store.js';

export interface PushRequest {
  partner: string;
  variant: Variant;
  entity: Entity;
  /** Validated records, in the order sent. */
  records: readonly unknown[];
  requestId: string;
  clientId: string;
  /** Remembered with the answer, in the same transaction as the records. */
  idempotency?: { key: string; requestHash: string };
  /** A bulk request (its sender is expected to send the next one once answered). */
  bulk?: boolean;
}

export interface PushAnswer {
  status: number;
  body: { accepted: number; loaded: number; waiting: number; request_id: string };
}

export interface GroupCommitOptions {
  /** How long the first request of an idle group waits for others (default 5 ms). */
  maxWaitMs?: number;
  /** Records that trigger a flush at once; a group never takes more, unless one request alone has more (default 4000: four full bulk requests). */
  maxRecords?: number;
  /** Longest wait for announced bulk requests before a group is written (default 1000 ms; a quarter of the stream's last transaction time when less). */
  maxHoldMs?: number;
  /** The share of the stream's last transaction time a group waits for announced requests at most (default 0.25). */
  holdShare?: number;
  logger?: Logger;
  /** Told after each load transaction (committed or not): for metrics. */
  onTransaction?: (done: { entity: Entity; requests: number; records: number; seconds: number; committed: boolean }) => void;
}

interface Pending {
  request: PushRequest;
  resolve(answer: PushAnswer): void;
  reject(error: unknown): void;
  /** The request's `push` span, which its commit's span links to. */
  span?: SpanContext;
}

interface Group {
  pending: Pending[];
  records: number;
  running: boolean;
  timer?: NodeJS.Timeout;
  /** Announced bulk requests not yet submitted (their bodies are being received or checked). */
  incoming: number;
  /** Bulk requests answered by the last transaction whose senders have not announced a new one yet. */
  comeback: number;
  /** Since when the next transaction has been held back for announced requests. */
  holdingSince?: number;
  /** Duration of the stream's last transaction, ms. */
  lastMs: number;
}

const PURGE_EVERY_MS = 60_000;

export const newRequestId = (): string => randomUUID();

export class GroupCommitQueue {
  private readonly groups = new Map<string, Group>();
  private readonly inFlight = new Set<Promise<void>>();
  private closed = false;
  private lastPurge = 0;
  /** Transactions run, for figures and tests. */
  transactions = 0;

  constructor(private readonly loader: Loader, private readonly options: GroupCommitOptions = {}) {}

  /** Queues a validated request; resolves with its answer once its records are committed. */
  submit(request: PushRequest): Promise<PushAnswer> {
    if (this.closed) return Promise.reject(new Error('the server is stopping: push refused'));
    return new Promise<PushAnswer>((resolve, reject) => {
      const group = this.group(request.partner, request.variant, request.entity);
      group.pending.push({ request, resolve, reject, span: activeSpanContext() });
      group.records += request.records.length;
      if (group.running) return; // gathered for the next transaction
      if (group.records >= this.maxRecords || (group.holdingSince !== undefined && !this.awaited(group))) this.flush(group);
      else group.timer ??= setTimeout(() => this.flush(group), this.options.maxWaitMs ?? 5);
    });
  }

  /**
   * A bulk request of this stream is being received: the next group waits for it (see the rules
   * above). Call the function returned once it is submitted or has failed; calling it again is harmless.
   */
  announce(partner: string, variant: Variant, entity: Entity): () => void {
    const group = this.group(partner, variant, entity);
    group.incoming++;
    if (group.comeback > 0) group.comeback--;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      group.incoming--;
      // The last one awaited is queued, or has failed or gone: what is held goes now.
      if (!this.awaited(group) && group.holdingSince !== undefined && !group.running) this.flush(group);
    };
  }

  /** Whether requests are on their way that the next group should wait for. */
  private awaited(group: Group): boolean {
    return group.incoming > 0 || group.comeback > 0;
  }

  private get maxRecords(): number {
    return this.options.maxRecords ?? 4000;
  }

  private group(partner: string, variant: Variant, entity: Entity): Group {
    const key = `${partner}\u0000${variant}\u0000${entity}`;
    let group = this.groups.get(key);
    if (!group) this.groups.set(key, (group = { pending: [], records: 0, running: false, incoming: 0, comeback: 0, lastMs: 0 }));
    return group;
  }

  /** Whether to hold the group back a little longer for announced requests (and re-arm its timer then). */
  private hold(group: Group): boolean {
    if (this.closed || !this.awaited(group) || group.records >= this.maxRecords) return false;
    const now = performance.now();
    group.holdingSince ??= now;
    const limit = Math.min(this.options.maxHoldMs ?? 1000, group.lastMs * (this.options.holdShare ?? 0.25));
    if (now - group.holdingSince >= limit) {
      // They did not come in time: not waited for again.
      group.comeback = 0;
      return false;
    }
    group.timer = setTimeout(() => this.flush(group), Math.max(1, Math.min(10, limit - (now - group.holdingSince))));
    return true;
  }

  /** Commits everything queued, refuses new requests, and resolves when all is answered. */
  async close(): Promise<void> {
    this.closed = true;
    for (const group of this.groups.values()) if (!group.running && group.pending.length > 0) this.flush(group);
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    await this.loader.drain();
  }

  private flush(group: Group): void {
    if (group.timer) clearTimeout(group.timer);
    group.timer = undefined;
    if (group.running || group.pending.length === 0) return;
    if (this.hold(group)) return;
    group.holdingSince = undefined;
    const max = this.maxRecords;
    const taken: Pending[] = [];
    let records = 0;
    while (group.pending.length > 0) {
      const next = group.pending[0] as Pending;
      if (taken.length > 0 && records + next.request.records.length > max) break;
      taken.push(next);
      group.pending.shift();
      records += next.request.records.length;
    }
    group.records -= records;
    group.running = true;
    const started = performance.now();
    const run = this.commit(taken).finally(() => {
      group.lastMs = performance.now() - started;
      group.comeback = taken.filter((p) => p.request.bulk).length;
      group.running = false;
      this.inFlight.delete(run);
      // What arrived meanwhile goes now: it has waited a whole transaction already.
      if (group.pending.length > 0) this.flush(group);
    });
    this.inFlight.add(run);
  }

  private async commit(taken: Pending[]): Promise<void> {
    try {
      const answers = await this.traced(taken);
      taken.forEach((p, i) => p.resolve(answers[i] as PushAnswer));
    } catch (error) {
      if (taken.length === 1) {
        taken[0]?.reject(error);
        return;
      }
      this.options.logger?.warn(`push: a grouped commit of ${taken.length} requests failed (${(error as Error).message}); each is retried alone`);
      for (const p of taken) {
        try {
          const [answer] = await this.traced([p]);
          p.resolve(answer as PushAnswer);
        } catch (alone) {
          p.reject(alone);
        }
      }
    }
    await this.purge();
  }

  /**
   * The requests' transaction in a `push.commit` span (src/trace.ts): a trace of its own, as it
   * serves several requests, linked to each request's `push` span.
   */
  private traced(taken: Pending[]): Promise<PushAnswer[]> {
    const first = (taken[0] as Pending).request;
    const attributes = { partner: first.partner, stream: first.entity, variant: first.variant, 'push.requests': taken.length, 'batch.size': taken.reduce((n, p) => n + p.request.records.length, 0) };
    const links = taken.flatMap((p) => (p.span ? [{ context: p.span }] : []));
    return inSpan('push.commit', attributes, () => this.write(taken.map((p) => p.request)), { root: true, links });
  }

  /** One Loader transaction for these requests (all of one partner and entity). */
  private async write(requests: PushRequest[]): Promise<PushAnswer[]> {
    const store = this.loader.store;
    const first = requests[0] as PushRequest;
    const answers: PushAnswer[] = [];
    this.transactions++;
    const started = performance.now();
    let committed = false;
    // Answered at the commit: the fraud rules and commissions evaluate right after, behind it.
    const run = Run.unrecorded(this.loader, `push-${first.requestId}`, 'behind');
    const runId = run.id;
    const work = async (tx: Parameters<Parameters<Loader['transaction']>[0]>[0]): Promise<void> => {
      // One batch of every request's records in arrival order: the load path's rule "the last
      // version of a key wins, as if the records had been sent one by one" spans the requests.
      const owner = new Map<unknown, number>();
      const records: unknown[] = [];
      requests.forEach((request, i) => {
        for (const record of request.records) {
          owner.set(record, i);
          records.push(record);
        }
      });
      const result = await tx.load({
        partner: first.partner,
        variant: first.variant,
        entity: first.entity,
        runId,
        records: records.map((value, i) => ({ position: i + 1, value })),
        itemize: true,
      });
      // Validated before queueing with the same validator: a reject here means the check was bypassed.
      if (result.rejected > 0) throw new Error(`push ${first.requestId}: ${result.rejected} record(s) failed validation in the load`);
      const waiting = new Array<number>(requests.length).fill(0);
      const stale = new Array<number>(requests.length).fill(0);
      const tally = (counts: number[], r: unknown) => { const i = owner.get(r) ?? 0; counts[i] = (counts[i] ?? 0) + 1; };
      for (const r of result.itemized?.waiting ?? []) tally(waiting, r);
      for (const r of result.itemized?.stale ?? []) tally(stale, r);
      requests.forEach((request, i) => {
        const accepted = request.records.length;
        const w = waiting[i] ?? 0;
        answers.push({ status: 200, body: { accepted, loaded: accepted - w - (stale[i] ?? 0), waiting: w, request_id: request.requestId } });
      });
      await tx.run(async (trx: Knex.Transaction) => {
        const now = store.now();
        for (const [i, request] of requests.entries()) {
          if (!request.idempotency) continue;
          const answer = answers[i] as PushAnswer;
          await saveAnswer(trx, request.clientId, request.idempotency.key, { requestHash: request.idempotency.requestHash, status: answer.status, body: answer.body }, now);
        }
        let lastDay: string | undefined;
        if (first.entity === 'activity') {
          for (const r of records) {
            const day = (r as { date?: unknown }).date;
            if (typeof day === 'string' && (lastDay === undefined || day > lastDay)) lastDay = day;
          }
        }
        await touchPushStream(trx, first.partner, first.entity, records.length, now, lastDay);
      });
    };
    try {
      await this.loader.transaction(work);
      committed = true;
    } catch (error) {
      // Committed, but an after-load job failed: its work stays pending and is resumed by the next
      // load or start (jobs/commission.ts). The records are in: the partner is answered so.
      if (!(error instanceof AfterCommitError)) throw error;
      committed = true;
      this.options.logger?.warn(`push: records committed; an after-load job failed and stays pending: ${error.message}`, { event: 'push_after_commit_failed' });
    } finally {
      await run.settle();
      const records = requests.reduce((n, r) => n + r.records.length, 0);
      this.options.onTransaction?.({ entity: first.entity, requests: requests.length, records, seconds: (performance.now() - started) / 1000, committed });
    }
    return answers;
  }

  private async purge(): Promise<void> {
    const now = this.loader.store.clock().getTime();
    if (now - this.lastPurge < PURGE_EVERY_MS) return;
    this.lastPurge = now;
    try {
      await purgeExpiredAnswers(this.loader.store.knex, this.loader.store.now());
    } catch (error) {
      this.options.logger?.warn(`push: cannot purge expired idempotency keys: ${(error as Error).message}`);
    }
  }
}
