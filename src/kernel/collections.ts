/**
 * Grouping helpers. `map.set(k, [...(map.get(k) ?? []), v])` copies the list on every add: a
 * group of n values costs n²/2 copies, which a bulk run's groups (every customer of a day, every
 * identity key of a kind) turned into seconds.
 */

/** Appends `value` to the list of `key`, creating it. */
export function append<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
