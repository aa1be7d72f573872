/**
 * The streams of definition files that exist and cannot load (a missing secret, a bad key). Such a
 * stream is not pulled, and that is not the same as a partner with no definition: `status`, the
 * console's Partners page and the worker's freshness monitor count it `stopped` and say why with
 * the file, the key path and the reason, as `check` does. One rule for all three faces.
 */
import { formatDefinitionError, type InvalidDefinition } from './load-definitions.js';

/** Why an invalid definition's streams are not pulled: its first error, and how many more `check` lists. */
export function invalidDetail(invalid: InvalidDefinition): string {
  const [first] = invalid.errors;
  const more = invalid.errors.length - 1;
  const why = first === undefined ? invalid.file : formatDefinitionError(first);
  return `definition invalid, not pulled: ${why}${more > 0 ? ` (+${more} more: partner-sync check)` : ''}`;
}

/**
 * `partner/stream` → why it is not pulled, for every stream of an invalid definition: those its
 * file lists; for a file that cannot be read that far (its YAML does not parse), the partner's
 * streams already known (`known`: keys of stored or pushed streams). Streams kept running on a
 * previous definition (a worker's reload) are left out by the caller.
 */
export function invalidStreams(invalid: readonly InvalidDefinition[], known: Iterable<string>): Map<string, string> {
  const out = new Map<string, string>();
  const keys = [...known];
  for (const def of invalid) {
    const detail = invalidDetail(def);
    const listed = def.streams.length > 0 ? def.streams.map((s) => `${def.partner}/${s}`) : keys.filter((k) => k.slice(0, k.lastIndexOf('/')) === def.partner);
    for (const key of listed) out.set(key, detail);
  }
  return out;
}
