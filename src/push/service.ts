/**
 * What a push request goes through, whatever face received it: payload rules, validation of every
 * record with the Loader's validator (all-or-nothing), the Idempotency-Key, then the group-commit
 * queue. The HTTP route only translates to and from this.
 *
 * Idempotency-Key (per client): a repeat of a key whose request committed within 24 hours gets the
 * first answer again (status, body, request_id) and writes nothing. The same key with another
 * request body is refused with 422 `idempotency_key_reused` (the IETF httpapi Idempotency-Key
 * draft's answer for a reused key). A repeat arriving while the first is still in flight waits for
 * it and then gets its answer. An invalid request (422) is not remembered: repeating it gives the
 * same errors again. The key is looked up before the body is validated: a key that committed
 * another request is `idempotency_key_reused` even when this body is also invalid.
 */
import { createHash } from 'node:crypto';
import { getClient } from '../access/api-clients.js';
import type { Loader } from '../pipeline/load.js';
import { minimiseRecord, minimises, personalData, type PersonalData } from '../spec/personal-data.js';
import type { Entity, Variant } from '../types.js';
import { GroupCommitQueue, newRequestId, type GroupCommitOptions } from './group-commit.js';
import { findAnswer } from './store.js';
import { bulkPayloadErrors, validateRecords, type PushError } from './validate.js';
import { deleteRecord } from './delete.js';

export interface PushInput {
  partner: string;
  variant: Variant;
  entity: Entity;
  clientId: string;
  /** The parsed body: one record, or an array for a bulk request. */
  body: unknown;
  bulk: boolean;
  idempotencyKey?: string;
}

export interface PushReply {
  status: number;
  body: Record<string, unknown>;
}

/** A pushed delete of one record (DELETE /api/v1/{variant}/{entity}/{id}; ./delete.ts). */
export interface DeleteInput {
  partner: string;
  variant: Variant;
  entity: 'customers' | 'transactions';
  id: string;
  clientId: string;
  idempotencyKey?: string;
}

export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

const badKey = (key: string | undefined): PushReply | undefined =>
  key !== undefined && (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(key))
    ? invalid('invalid_request', `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters`, [{ index: 0, field: 'Idempotency-Key', rule: 'format', message: 'not 1 to 255 visible ASCII characters' }])
    : undefined;

export class PushService {
  readonly queue: GroupCommitQueue;
  private readonly inFlight = new Map<string, Promise<unknown>>();
  private readonly reading = new Set<Promise<unknown>>();
  private readonly policies = new Map<string, Promise<PersonalData | undefined> | { data: PersonalData | undefined }>();

  constructor(private readonly loader: Loader, options: GroupCommitOptions = {}) {
    this.queue = new GroupCommitQueue(loader, options);
  }

  async push(input: PushInput): Promise<PushReply> {
    const key = input.idempotencyKey;
    const refused = badKey(key);
    if (refused) return refused;
    // A key already used for another request is refused as reused whatever this body is: the
    // client's mistake is the key, and a 422 validation_failed would hide it.
    if (key !== undefined) {
      const stored = await findAnswer(this.loader.store.knex, input.clientId, key, this.loader.store.now());
      if (stored && stored.requestHash !== hashRequest(input)) return replay(stored, hashRequest(input));
    }
    const payloadErrors = input.bulk ? bulkPayloadErrors(input.body) : [];
    if (payloadErrors.length > 0) return invalid('validation_failed', payloadErrors[0]?.message ?? 'invalid payload', payloadErrors);
    const records: unknown[] = input.bulk ? (input.body as unknown[]) : [input.body];
    const validator = this.loader.validator;
    const errors = validateRecords(validator, input.variant, input.entity, records);
    if (errors.length > 0) {
      const invalidRecords = new Set(errors.map((e) => e.index)).size;
      return invalid('validation_failed', `${invalidRecords} of ${records.length} record(s) failed validation; nothing was stored`, errors);
    }
    const minimised = this.minimised(input, records);
    let kept: unknown[];
    if (minimised instanceof Promise) {
      // A client's first push reads its policy: close() waits for it to reach the queue.
      this.reading.add(minimised);
      try {
        kept = await minimised;
      } finally {
        this.reading.delete(minimised);
      }
    } else kept = minimised;
    if (key === undefined) return this.queue.submit({ ...this.target(input), records: kept, requestId: newRequestId() });

    const requestHash = hashRequest(input);
    return this.oneAtATime(input.clientId, key, () => this.once(input, key, requestHash, kept));
  }

  /**
   * A pushed delete: the same Idempotency-Key rules as a push (a repeat within 24 hours gets the
   * first answer; the key with another request is `idempotency_key_reused`).
   */
  async remove(input: DeleteInput): Promise<PushReply> {
    const key = input.idempotencyKey;
    const refused = badKey(key);
    if (refused) return refused;
    const target = { partner: input.partner, variant: input.variant, entity: input.entity, id: input.id, clientId: input.clientId };
    if (key === undefined) return deleteRecord(this.loader, target);
    const requestHash = createHash('sha256').update(JSON.stringify(['DELETE', input.variant, input.entity, input.id])).digest('hex');
    return this.oneAtATime(input.clientId, key, async () => {
      const { store } = this.loader;
      const stored = await findAnswer(store.knex, input.clientId, key, store.now());
      if (stored) return replay(stored, requestHash);
      try {
        return await deleteRecord(this.loader, { ...target, idempotency: { key, requestHash } });
      } catch (error) {
        const first = await findAnswer(store.knex, input.clientId, key, store.now()).catch(() => undefined);
        if (first) return replay(first, requestHash);
        throw error;
      }
    });
  }

  /** One request per (client, key) at a time in this process: a repeat waits for the first. */
  private async oneAtATime(clientId: string, key: string, run: () => Promise<PushReply>): Promise<PushReply> {
    const slot = `${clientId}\u0000${key}`;
    for (let waiting = this.inFlight.get(slot); waiting; waiting = this.inFlight.get(slot)) await waiting.catch(() => undefined);
    const work = run();
    this.inFlight.set(slot, work);
    try {
      return await work;
    } finally {
      if (this.inFlight.get(slot) === work) this.inFlight.delete(slot);
    }
  }

  private async once(input: PushInput, key: string, requestHash: string, records: unknown[]): Promise<PushReply> {
    const { store } = this.loader;
    const stored = await findAnswer(store.knex, input.clientId, key, store.now());
    if (stored) return replay(stored, requestHash);
    try {
      return await this.queue.submit({ ...this.target(input), records, requestId: newRequestId(), idempotency: { key, requestHash } });
    } catch (error) {
      // Another process committed the same key first (its row made this transaction fail).
      const first = await findAnswer(store.knex, input.clientId, key, store.now()).catch(() => undefined);
      if (first) return replay(first, requestHash);
      throw error;
    }
  }

  async close(): Promise<void> {
    // A push reading its client's policy is queued before the queue closes (it resumes first).
    while (this.reading.size > 0) await Promise.allSettled([...this.reading]);
    return this.queue.close();
  }

  /**
   * The customer records as the client's personal-data policy keeps them (copies: the body stays as
   * sent, for the Idempotency-Key's comparison). A client's policy is set when it is created, so it
   * is read once per client; once known it is applied at once, so that the request joins its group
   * as it would without a policy.
   */
  private minimised(input: PushInput, records: unknown[]): unknown[] | Promise<unknown[]> {
    if (input.entity !== 'customers') return records;
    const known = this.policies.get(input.clientId);
    if (known !== undefined && !(known instanceof Promise)) return applyPolicy(known.data, records);
    let reading = known;
    if (reading === undefined) {
      reading = getClient(this.loader.store, input.clientId).then((c) => {
        const data = personalData(c?.personalData, process.env);
        this.policies.set(input.clientId, { data });
        return data;
      });
      reading.catch(() => this.policies.delete(input.clientId));
      this.policies.set(input.clientId, reading);
    }
    return reading.then((data) => applyPolicy(data, records));
  }

  private target(input: PushInput) {
    return { partner: input.partner, variant: input.variant, entity: input.entity, clientId: input.clientId, bulk: input.bulk };
  }
}

function applyPolicy(data: PersonalData | undefined, records: unknown[]): unknown[] {
  if (!minimises(data)) return records;
  return records.map((r) => {
    const copy = { ...(r as Record<string, unknown>) };
    minimiseRecord(copy, data);
    return copy;
  });
}

function invalid(error: string, message: string, errors: PushError[]): PushReply {
  return { status: 422, body: { error, message, errors } };
}

function replay(stored: { requestHash: string; status: number; body: Record<string, unknown> }, requestHash: string): PushReply {
  if (stored.requestHash !== requestHash) {
    return invalid('idempotency_key_reused', 'this Idempotency-Key was used with a different request within the last 24 hours', [
      { index: 0, field: 'Idempotency-Key', rule: 'idempotency', message: 'the key belongs to a request with another path or body' },
    ]);
  }
  return { status: stored.status, body: stored.body };
}

/** What makes two requests "the same": variant, entity, single or bulk, and the parsed body. */
function hashRequest(input: PushInput): string {
  return createHash('sha256').update(JSON.stringify([input.variant, input.entity, input.bulk, input.body])).digest('hex');
}
