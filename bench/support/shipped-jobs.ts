/**
 * The after-load jobs as shipped (config/commissions.yaml, config/fraud.yaml), with the iGaming
 * plans applied to a benchmark's own partner: what a user with the shipped configuration gets.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLoadHooks } from '../../jobs/load-hooks.js';
import type { LoaderDeps } from '../../src/pipeline/load.js';
import { parsePlans } from '../../src/commission/load-plans.js';
import type { Plan } from '../../src/commission/plans.js';
import { loadFraudConfig, type FraudConfig } from '../../src/fraud/config.js';
import { silentLogger } from '../../src/log.js';
import type { Store } from '../../src/store/store.js';

const CONFIG = fileURLToPath(new URL('../../../config/', import.meta.url));

/** config/commissions.yaml with the iGaming partner's plans applied to `partner`. */
function commissionsYaml(partner: string): string {
  return readFileSync(join(CONFIG, 'commissions.yaml'), 'utf8').replaceAll('partner: sandbox-casino', `partner: ${partner}`);
}

export async function shippedJobs(partner: string): Promise<{ plans: Plan[]; fraud: FraudConfig }> {
  const { plans, errors } = parsePlans(commissionsYaml(partner), 'commissions.yaml');
  if (errors.length > 0) throw new Error(JSON.stringify(errors));
  const fraud = await loadFraudConfig(join(CONFIG, 'fraud.yaml'));
  if (!fraud.config) throw new Error(JSON.stringify(fraud.errors));
  return { plans, fraud: fraud.config };
}

/** Every after-load job, as the CLI and the worker compose them. */
export async function shippedHooks(store: Store, partner: string): Promise<Pick<LoaderDeps, 'jobs' | 'logger'>> {
  const { plans, fraud } = await shippedJobs(partner);
  return createLoadHooks(store, { plans, logger: silentLogger(), fraud });
}

/** Writes the shipped commissions.yaml (for `partner`) and fraud.yaml into a config directory (`--config`). */
export function writeShippedConfig(dir: string, partner: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'commissions.yaml'), commissionsYaml(partner));
  writeFileSync(join(dir, 'fraud.yaml'), readFileSync(join(CONFIG, 'fraud.yaml'), 'utf8'));
}
