/**
 * The load path every source uses: validate a batch of one partner and stream, then in ONE store
 * transaction write its rejects, upsert its valid records (chunks of at most 1000 rows), park
 * records whose customer has not arrived and release those waiting for customers that just did,
 * and save the stream's checkpoint. A crash before the commit leaves nothing; after it, all.
 */
import type { Knex } from 'knex';
import type { Entity, RawRecord, RecordValidator, SpecRecord, Variant, Violation } from '../types.js';
import { ensurePartner } from '../store/partners.js';
import { quarantine } from '../store/rejects.js';
import { batchKey, recordKey } from '../store/rows.js';
import type { Store } from '../store/store.js';
import { saveCheckpoint, type Checkpoint } from '../store/sync-state.js';
import { entityTable, type EntityTable } from '../store/tables.js';
import { upsertRecords } from '../store/upsert.js';
import { dropParked, knownCustomers, park, unpark, type ParkedRecord } from '../store/waiting.js';
import { validateBatch } from './validate-batch.js';

export interface BatchInput {
  partner: string;
  variant: Variant;
  entity: Entity;
  runId: string;
  records: readonly RawRecord[];
  /** Saved in the same transaction as the rows. */
  checkpoint?: Checkpoint;
}

export interface BatchResult {
  received: number;
  valid: number;
  rejected: number;
  /** Valid records written to their table (received = loaded + rejected + waiting). */
  loaded: number;
  /** Valid records parked until their customer arrives. */
  waiting: number;
  /** Records parked earlier that loaded now because this batch brought their customer. */
  released: number;
  rejects: { position: number; errors: Violation[] }[];
}

export interface LoaderDeps {
  store: Store;
  validator: RecordValidator;
}

/** Customer ids remembered per partner; customers are never deleted, so a hit is always still true. */
const KNOWN_CUSTOMER_CACHE_LIMIT = 500_000;

export class Loader {
  private readonly partners = new Map<string, Variant>();
  private readonly customers = new Map<string, Set<string>>();

  constructor(private readonly deps: LoaderDeps) {}

  async load(input: BatchInput): Promise<BatchResult> {
    const { store, validator } = this.deps;
    const table = entityTable(input.variant, input.entity);
    const { valid, rejects } = validateBatch(validator, input.variant, input.entity, input.records);
    // Last version of a key wins, as if the records had been sent one by one.
    const latest = new Map<string, SpecRecord>();
    for (const record of valid) latest.set(batchKey(table, record), record);

    const now = store.now();
    const result: BatchResult = {
      received: input.records.length,
      valid: valid.length,
      rejected: rejects.length,
      loaded: 0,
      waiting: 0,
      released: 0,
      rejects: rejects.map((r) => ({ position: r.position, errors: r.errors })),
    };
    const arrived: string[] = [];

    await store.transaction(async (trx) => {
      if (this.partners.get(input.partner) !== input.variant) await ensurePartner(trx, input.partner, input.variant, now);
      if (rejects.length > 0) {
        await quarantine(trx, { partner: input.partner, variant: input.variant, entity: input.entity, runId: input.runId, now }, rejects);
      }
      const upsert = (t: EntityTable, records: SpecRecord[]) =>
        upsertRecords(store, trx, t, { partner: input.partner, runId: input.runId, loadedAt: now, records });

      if (input.entity === 'customers') {
        await upsert(table, [...latest.values()]);
        arrived.push(...latest.keys());
        result.released = await this.release(trx, input, await unpark(trx, input.partner, arrived), now);
        result.loaded = valid.length;
      } else {
        const known = await this.knownCustomers(trx, input.partner, latest.values());
        const direct: SpecRecord[] = [];
        const parked: ParkedRecord[] = [];
        for (const record of latest.values()) {
          const customerId = record.customer_id as string;
          if (known(customerId)) direct.push(record);
          else parked.push({ entity: input.entity, key: recordKey(table, record), customerId, record });
        }
        await upsert(table, direct);
        await dropParked(trx, input.partner, input.entity, () => direct.map((r) => recordKey(table, r)));
        await park(trx, input.partner, input.runId, now, parked);
        const parkedCustomers = new Set(parked.map((p) => p.customerId));
        result.waiting = valid.filter((r) => parkedCustomers.has(r.customer_id as string)).length;
        result.loaded = valid.length - result.waiting;
      }
      if (input.checkpoint) await saveCheckpoint(trx, input.partner, input.checkpoint, input.runId, now);
    });

    this.partners.set(input.partner, input.variant);
    this.remember(input.partner, arrived);
    return result;
  }

  /** Loads parked records whose customer arrived; returns how many. */
  private async release(trx: Knex.Transaction, input: BatchInput, parked: ParkedRecord[], now: string): Promise<number> {
    for (const entity of ['transactions', 'activity'] as const) {
      const table = entityTable(input.variant, entity);
      const records = parked.filter((p) => p.entity === entity).map((p) => p.record);
      await upsertRecords(this.deps.store, trx, table, { partner: input.partner, runId: input.runId, loadedAt: now, records });
    }
    return parked.length;
  }

  /** A membership test for the customers of these records: remembered ones, then one query for the rest. */
  private async knownCustomers(trx: Knex.Transaction, partner: string, records: Iterable<SpecRecord>): Promise<(id: string) => boolean> {
    const cache = this.customers.get(partner) ?? new Set<string>();
    const unknown = new Set<string>();
    for (const r of records) {
      const id = r.customer_id as string;
      if (!cache.has(id)) unknown.add(id);
    }
    const found = unknown.size > 0 ? await knownCustomers(trx, partner, [...unknown]) : new Set<string>();
    this.remember(partner, found);
    return (id) => cache.has(id) || found.has(id);
  }

  private remember(partner: string, ids: Iterable<string>): void {
    let cache = this.customers.get(partner);
    if (!cache) this.customers.set(partner, (cache = new Set()));
    for (const id of ids) {
      if (cache.size >= KNOWN_CUSTOMER_CACHE_LIMIT) cache.clear();
      cache.add(id);
    }
  }
}
