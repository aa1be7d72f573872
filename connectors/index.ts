/**
 * Source kinds, by the `source.type` of a connector definition: an explicit map, no discovery by
 * file name. Adding a kind is adding its folder and one line here.
 */
import type { PartnerDefinition, RestSource } from '../src/config/definition.js';
import type { Logger, Redact } from '../src/log.js';
import type { Clock } from '../src/store/store.js';
import { createRestSource } from './rest/source.js';
import type { Source } from './source.js';

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
  db: () => {
    throw new Error('the db source kind is not available yet');
  },
  warehouse: () => {
    throw new Error('the warehouse source kind is not available yet');
  },
};

export function createSource(def: PartnerDefinition, deps: SourceDeps): Source {
  return SOURCE_KINDS[def.source.type](def, deps);
}
