/**
 * Re-reading the connector definitions while the worker runs (SIGHUP). Each file is validated
 * as at start; a file with errors does not replace what runs: its partner keeps the definition
 * it had, and the errors are logged. A new valid file adds its partner; a removed file drops it
 * (a run in progress finishes).
 */
import { basename } from 'node:path';
import type { PartnerDefinition } from '../config/definition.js';
import type { DefinitionError, InvalidDefinition, LoadedDefinitions } from '../config/load-definitions.js';

export interface MergedDefinitions {
  definitions: PartnerDefinition[];
  /** Partners whose file has errors now and that keep their previous definition. */
  kept: string[];
  /** Files with errors (and no previous definition to keep, or kept). */
  errors: DefinitionError[];
  /** Files with errors whose partner has no definition left running: their streams are not pulled. */
  invalid: InvalidDefinition[];
}

const stem = (file: string): string => basename(file).replace(/\.ya?ml$/i, '');

export function mergeDefinitions(previous: readonly PartnerDefinition[], loaded: LoadedDefinitions): MergedDefinitions {
  const broken = new Set(loaded.errors.map((e) => stem(e.file)));
  const definitions = [...loaded.definitions];
  const kept: string[] = [];
  for (const old of previous) {
    if (definitions.some((d) => d.partner === old.partner)) continue;
    if (broken.has(stem(old.file)) || broken.has(old.partner)) {
      definitions.push(old);
      kept.push(old.partner);
    }
  }
  // A folder that cannot be read at all: keep everything.
  const folderError = loaded.definitions.length === 0 && loaded.errors.some((e) => e.path === '' && /definitions folder/.test(e.message));
  if (folderError) return { definitions: [...previous], kept: previous.map((d) => d.partner), errors: loaded.errors, invalid: [] };
  definitions.sort((a, b) => a.partner.localeCompare(b.partner));
  return { definitions, kept, errors: loaded.errors, invalid: loaded.invalid.filter((i) => !definitions.some((d) => d.partner === i.partner)) };
}
