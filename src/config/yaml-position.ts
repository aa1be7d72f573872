/**
 * Where a key path sits in a parsed YAML file, so that an error about a config file (connector
 * definitions, commission plans) can name its line and column.
 */
import { isMap, isScalar, isSeq, type LineCounter, type Node as YamlNode } from 'yaml';
import type { SchemaProblem } from './definition-schema.js';

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function position(lineCounter: LineCounter, offset: number | undefined): { line?: number; column?: number } {
  if (offset === undefined) return {};
  const { line, col } = lineCounter.linePos(offset);
  return { line, column: col };
}

/**
 * The line of a key path in the document: the value's node, the key's node for an unknown key, or
 * the nearest existing ancestor for a missing key.
 */
export function locate(root: unknown, lineCounter: LineCounter, path: readonly string[], at: SchemaProblem['at']): { line?: number; column?: number } {
  let node: unknown = root;
  let last: unknown = root;
  for (const part of path) {
    let next: unknown;
    let keyNode: unknown;
    if (isMap(node)) {
      const pair = node.items.find((item) => String(isScalar(item.key) ? item.key.value : item.key) === part);
      if (pair === undefined) break;
      next = pair.value;
      keyNode = pair.key;
    } else if (isSeq(node)) {
      next = node.items[Number(part)];
      if (next === undefined) break;
    } else break;
    node = next;
    last = at === 'key' && keyNode !== undefined ? keyNode : next ?? keyNode;
  }
  const target = (last ?? root) as YamlNode | undefined;
  return position(lineCounter, target?.range?.[0]);
}
