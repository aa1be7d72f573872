import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PartnerDefinition, RestStream } from '../../src/config/definition.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import type { StoreBackend, TestStore } from './stores.js';
import { loadDefinition } from '../../src/config/load-definitions.js';
import { packageRoot } from '../../src/paths.js';
import { storedToRecord } from '../../src/store/rows.js';
import type { Store } from '../../src/store/store.js';
import { entityTable } from '../../src/store/tables.js';
import { toUtcTimestamp } from '../../src/kernel/timestamp.js';
import type { Entity, SpecRecord, Variant } from '../../src/types.js';

export const SANDBOX_SECRET = 'sandbox-secret-for-tests-7Qx';
export const EXAMPLE = { igaming: 'sandbox-casino', 'prop-trading': 'sandbox-prop' } as const;

/** The bundled example definition of a variant, pointed at a running sandbox, loaded through the real loader. */
export async function exampleDefinition(variant: Variant, baseUrl: string, edit: (yaml: string) => string = (y) => y): Promise<{ def: PartnerDefinition; dir: string; cleanup(): void }> {
  const name = EXAMPLE[variant];
  const dir = mkdtempSync(join(tmpdir(), 'partner-sync-defs-'));
  mkdirSync(join(dir, 'partners'));
  const yaml = readFileSync(join(packageRoot(), 'config', 'partners', `${name}.yaml`), 'utf8').replace(/base_url: .*/, `base_url: ${baseUrl}`);
  const file = join(dir, 'partners', `${name}.yaml`);
  writeFileSync(file, edit(yaml));
  const loaded = await loadDefinition(file, { ...process.env, SANDBOX_CLIENT_SECRET: SANDBOX_SECRET });
  if (!loaded.definition) throw new Error(`example definition does not load: ${JSON.stringify(loaded.errors)}`);
  return { def: loaded.definition, dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A spec record as the store keeps it: spec fields only, date-times in UTC at microseconds. */
export function asStored(variant: Variant, entity: Entity, record: Readonly<SpecRecord>): SpecRecord {
  const table = entityTable(variant, entity);
  const out: SpecRecord = {};
  for (const column of table.columns) {
    const value = record[column.name];
    if (value === undefined || value === null) continue;
    out[column.name] = column.kind === 'timestamp' ? toUtcTimestamp(value as string) : value;
  }
  return out;
}

/** Every stored record of a partner's table, keyed by its upsert key, spec fields only. */
export async function storedByKey(store: Store, partner: string, variant: Variant, entity: Entity): Promise<Map<string, SpecRecord>> {
  const table = entityTable(variant, entity);
  const rows = (await store.knex(table.name).where('partner_id', partner)) as Record<string, unknown>[];
  return new Map(rows.map((r) => {
    const record = storedToRecord(table, r);
    return [table.key.map((k) => String(record[k])).join('|'), record];
  }));
}

export function byKey(variant: Variant, entity: Entity, records: readonly Readonly<SpecRecord>[]): Map<string, SpecRecord> {
  const table = entityTable(variant, entity);
  return new Map(records.map((r) => {
    const record = asStored(variant, entity, r);
    return [table.key.map((k) => String(record[k])).join('|'), record];
  }));
}

/** What sandboxPartnerEach makes before each test: a store, the sandbox partner and its example definition. */
export interface SandboxPartner {
  t: TestStore;
  sandbox: Sandbox;
  def: PartnerDefinition;
}

/**
 * Before each test of the suite: a fresh store of `backend`, the sandbox partner (its iGaming
 * example definition pointed at it, edited by `edit`) with customers and transactions read from
 * the sandbox's first day and no activity stream; all of it gone after each test.
 */
export function sandboxPartnerEach(backend: StoreBackend, options: { seed: number; customers: number; edit?: (yaml: string) => string }): SandboxPartner {
  const made = {} as SandboxPartner;
  let cleanup = (): void => undefined;
  beforeEach(async () => {
    made.t = await backend.create();
    made.sandbox = await startSandbox({ port: 0, seed: options.seed, customers: options.customers, clients: [{ client_id: 'sandbox-client', client_secret: SANDBOX_SECRET }] });
    const example = await exampleDefinition('igaming', made.sandbox.url, options.edit);
    made.def = example.def;
    cleanup = example.cleanup;
    delete made.def.streams.activity;
    for (const entity of ['customers', 'transactions'] as const) (made.def.streams[entity] as RestStream).incremental.start = `${made.sandbox.data.from}T00:00:00Z`;
  });
  afterEach(async () => {
    await made.sandbox?.close();
    cleanup();
    await made.t?.drop();
  });
  return made;
}
