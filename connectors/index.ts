/**
 * Source kinds, by the `source.type` of a connector definition: an explicit map, no discovery by
 * file name. Adding a kind is adding its folder and one line here.
 */
import type { DbSource, PartnerDefinition, RestSource, WarehouseSource } from '../src/config/definition.js';
import type { Logger, Redact } from '../src/log.js';
import type { Clock } from '../src/kernel/clock.js';
import { createDbSource } from './db/source.js';
import { createRestSource } from './rest/source.js';
import type { Source } from './source.js';
import { createWarehouseSource } from './warehouse/source.js';

export interface SourceDeps {
  clock: Clock;
  logger: Logger;
  redact: Redact;
  /** Epoch ms after which waits end the run cleanly (default: the definition's run budget). */
  deadline?: number;
}

export type SourceFactory = (def: PartnerDefinition, deps: SourceDeps) => Source;

export const SOURCE_KINDS: Record<PartnerDefinition['source']['type'], SourceFactory> = {
  rest: (def, deps) => createRestSource(def.source as RestSource, deps),
  db: (def, deps) => createDbSource(def.source as DbSource, { ...deps, variant: def.variant }),
  warehouse: (def, deps) => createWarehouseSource(def.source as WarehouseSource, { ...deps, variant: def.variant }),
};

export function createSource(def: PartnerDefinition, deps: SourceDeps): Source {
  return SOURCE_KINDS[def.source.type](def, deps);
}
