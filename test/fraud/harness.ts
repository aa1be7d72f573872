/**
 * A store and a Loader wired through the after-load composition (jobs/load-hooks.ts) with fraud
 * rules written as YAML, exactly as in config/fraud.yaml; functions that read the flags back.
 */
import assert from 'node:assert/strict';
import { parseFraudConfig, formatFraudConfigError, type FraudConfig } from '../../src/fraud/config.js';
import { listFlags, type Flag } from '../../src/fraud/flags.js';
import { Loader } from '../../src/pipeline/load.js';
import type { Entity, SpecRecord, Variant } from '../../src/types.js';
import { loaderWithEveryJob } from '../support/loader.js';
import { raw } from '../support/records.js';
import { fixedClock, type StoreBackend, type TestStore } from '../support/stores.js';

export function fraudFrom(yaml: string): FraudConfig {
  const { config, errors } = parseFraudConfig(yaml, 'test.yaml');
  if (errors.length > 0 || !config) throw new Error(errors.map(formatFraudConfigError).join('\n'));
  return config;
}

export interface FraudHarness {
  t: TestStore;
  config: FraudConfig;
  loader: Loader;
  clock: ReturnType<typeof fixedClock>;
  load(entity: Entity, records: SpecRecord[], options?: { partner?: string; variant?: Variant }): Promise<void>;
  flags(rule?: string): Promise<Flag[]>;
  drop(): Promise<void>;
}

export async function fraudHarness(backend: StoreBackend, yaml: string, variant: Variant = 'igaming'): Promise<FraudHarness> {
  const clock = fixedClock('2026-11-22T10:00:00.000Z');
  const t = await backend.create(clock);
  const config = fraudFrom(yaml);
  const loader = loaderWithEveryJob(t.store, { fraud: config });
  let run = 0;
  return {
    t, config, clock, loader,
    async load(entity, records, options = {}) {
      const result = await loader.load({ partner: options.partner ?? (variant === 'igaming' ? 'casino' : 'prop'), variant: options.variant ?? variant, entity, runId: `run-${++run}`, records: raw(records) });
      assert.equal(result.rejected, 0, `test records must be valid: ${JSON.stringify(result.rejects)}`);
    },
    flags: (rule) => listFlags(t.store.knex, { rule }),
    drop: () => t.drop(),
  };
}

export const cust = (id: string, affiliate = 'aff-1', extra: SpecRecord = {}): SpecRecord => ({ customer_id: id, signup_date: '2026-11-01T00:00:00Z', affiliate_id: affiliate, ...extra });
export const tx = (id: string, customer: string, type: string, amount: number, at: string, extra: SpecRecord = {}): SpecRecord => ({
  transaction_id: id, customer_id: customer, transaction_type: type, amount_currency: amount, currency: 'USD', transaction_date: at, status: 'approved', ...extra,
});
export const bets = (date: string, customer: string, totalBets: number): SpecRecord => ({ date, customer_id: customer, game_type: 'slots', currency: 'USD', total_bets: totalBets, wins: 0 });
export const trade = (date: string, customer: string, instrument: string, lots: number, pnl: number): SpecRecord => ({ date, customer_id: customer, instrument, lots_traded: lots, pnl, currency: 'USD' });
