/**
 * A store with the whole after-load composition (jobs/load-hooks.ts), commission plans, a
 * postback definition pointing at a local receiver, and a deliverer: what the postback tests
 * build on. Events are read back from the outbox and from what the receiver got.
 */
import assert from 'node:assert/strict';
import { silentLogger } from '../../src/log.js';
import type { Plan } from '../../src/commission/plans.js';
import type { Loader } from '../../src/pipeline/load.js';
import { addPostback, type NewPostback, type PostbackDefinition } from '../../src/postbacks/definitions.js';
import { Deliverer, type DeliveryOptions } from '../../src/postbacks/deliverer.js';
import type { Entity, SpecRecord, Variant } from '../../src/types.js';
import { loaderWithEveryJob } from '../support/loader.js';
import { CPA_FROM_20, plansFrom, plansYaml } from '../support/plans.js';
import { raw } from '../support/records.js';
import { fixedClock, type StoreBackend, type TestStore } from '../support/stores.js';

export const SECRET_KEY = 'test-postback-key-0123456789abcdef0123456789';

export interface PostbackHarness {
  t: TestStore;
  loader: Loader;
  clock: ReturnType<typeof fixedClock>;
  plans: Plan[];
  load(entity: Entity, records: SpecRecord[], options?: { partner?: string; variant?: Variant; runId?: string }): Promise<void>;
  define(input: Partial<NewPostback> & { url: string }): Promise<{ postback: PostbackDefinition; secret: string }>;
  /** The outbox: [kind, fact key] in order. */
  events(): Promise<[string, string][]>;
  deliverer(options?: Partial<DeliveryOptions>): Deliverer;
  drop(): Promise<void>;
}

/** Plans: CPA_FROM_20 (test/support/plans.ts). */
export async function postbackHarness(backend: StoreBackend, clockAt = '2026-11-22T10:00:00.000Z'): Promise<PostbackHarness> {
  const clock = fixedClock(clockAt);
  const t = await backend.create(clock);
  const plans = plansFrom(plansYaml(CPA_FROM_20));
  const loader = loaderWithEveryJob(t.store, { plans });
  let run = 0;
  return {
    t, loader, clock, plans,
    async load(entity, records, options = {}) {
      const result = await loader.load({ partner: options.partner ?? 'casino', variant: options.variant ?? 'igaming', entity, runId: options.runId ?? `run-${++run}`, records: raw(records) });
      assert.equal(result.rejected, 0, `test records must be valid: ${JSON.stringify(result.rejects)}`);
    },
    define: (input) => addPostback(t.store, { affiliate: 'aff-1', events: 'registration,ftd,deposit,deposit_reversed,cpa_qualified,cpa_clawback,challenge_purchase,phase_change', allowPrivate: true, ...input }, SECRET_KEY),
    async events() {
      const rows = (await t.store.knex('postback_events').orderBy('seq').select('kind', 'fact_key')) as { kind: string; fact_key: string }[];
      return rows.map((r) => [r.kind, r.fact_key]);
    },
    deliverer: (options = {}) => new Deliverer({ store: t.store, logger: silentLogger(), secretKey: SECRET_KEY, options: { pollMs: 20, timeoutMs: 2000, baseDelayMs: 50, maxDelayMs: 200, ...options } }),
    drop: () => t.drop(),
  };
}
