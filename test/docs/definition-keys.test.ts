/**
 * Every key of the connector definition schema is documented in docs/connectors.md: a key a user
 * meets in a draft (`cursor_param`, `per_page_param`) or an error message must be findable in the
 * page the README points to. A key counts as documented when it appears in inline code there
 * (`cursor_param`, `pagination.cursor_param`, `{ from: x }`).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../src/paths.js';

const root = packageRoot();

/** Every property name of the schema, with the JSON path of its first definition. */
export function schemaKeys(schema: unknown): Map<string, string> {
  const keys = new Map<string, string>();
  const walk = (node: unknown, path: string): void => {
    if (Array.isArray(node)) {
      node.forEach((n, i) => walk(n, `${path}/${i}`));
      return;
    }
    if (node === null || typeof node !== 'object') return;
    const object = node as Record<string, unknown>;
    const properties = object.properties;
    if (properties !== null && typeof properties === 'object' && !Array.isArray(properties)) {
      for (const key of Object.keys(properties)) if (!keys.has(key)) keys.set(key, `${path}/properties/${key}`);
    }
    for (const [name, value] of Object.entries(object)) walk(value, `${path}/${name}`);
  };
  walk(schema, '#');
  return keys;
}

/** The words of the page's inline code spans. */
function codeWords(markdown: string): Set<string> {
  const words = new Set<string>();
  for (const span of markdown.matchAll(/`([^`\n]+)`/g)) for (const word of (span[1] ?? '').split(/[^A-Za-z0-9_]+/)) if (word !== '') words.add(word);
  return words;
}

describe('docs/connectors.md documents the connector definition', () => {
  it('names every key of src/config/partner-definition.schema.json in inline code', () => {
    const schema = JSON.parse(readFileSync(join(root, 'src/config/partner-definition.schema.json'), 'utf8')) as unknown;
    const keys = schemaKeys(schema);
    assert.ok(keys.size > 80, `${keys.size} keys found: the walk reads the schema's properties`);
    assert.ok(keys.has('cursor_param') && keys.has('per_page_param') && keys.has('max_retry_after'));
    const words = codeWords(readFileSync(join(root, 'docs/connectors.md'), 'utf8'));
    const missing = [...keys].filter(([key]) => !words.has(key)).map(([key, at]) => `${key} (${at})`);
    assert.deepEqual(missing, [], `keys of the definition schema not documented in docs/connectors.md:\n${missing.join('\n')}`);
  });

  it('the check fails naming a key the page leaves out', () => {
    const words = codeWords('`pagination` (`page` | `cursor`), `per_page_param`');
    const keys = schemaKeys({ properties: { pagination: { properties: { per_page_param: {}, cursor_param: {} } } } });
    assert.deepEqual([...keys].filter(([key]) => !words.has(key)).map(([key, at]) => `${key} (${at})`), ['cursor_param (#/properties/pagination/properties/cursor_param)']);
  });
});
