import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { definitionSchema, definitionSchemaFile } from '../../src/config/definition-schema.js';
import { packageRoot } from '../../src/paths.js';

type Node = Record<string, unknown>;

/** The `if` of a conditional only selects (by source.type) and its `then` only adds: neither is a schema of its own to close or describe. */
const conditional = (pointer: string): boolean => /\/(if|then)(\/|$)/.test(pointer);

/** Every schema node with its JSON pointer. */
function nodes(value: unknown, pointer = '#'): [string, Node][] {
  if (Array.isArray(value)) return value.flatMap((item, i) => nodes(item, `${pointer}/${i}`));
  if (typeof value !== 'object' || value === null) return [];
  const node = value as Node;
  return [[pointer, node], ...Object.entries(node).flatMap(([key, child]) => nodes(child, `${pointer}/${key}`))];
}

describe('connector definition schema', () => {
  const schema = JSON.parse(readFileSync(definitionSchemaFile(), 'utf8')) as Node;

  it('compiles with ajv (strict, 2020-12)', () => {
    assert.equal(typeof definitionSchema().validate, 'function');
    assert.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
  });

  it('describes every property', () => {
    const missing: string[] = [];
    for (const [pointer, node] of nodes(schema)) {
      const properties = node.properties;
      if (typeof properties !== 'object' || properties === null || pointer.endsWith('/properties') || /\/if(\/|$)/.test(pointer)) continue;
      for (const [key, property] of Object.entries(properties as Node)) {
        if (property === true) continue; // a oneOf branch naming a key it requires
        if (typeof (property as Node).description !== 'string') missing.push(`${pointer}/properties/${key}`);
      }
    }
    assert.deepEqual(missing, []);
  });

  it('closes every object: unknown keys are errors (free-form maps name their value schema)', () => {
    const open: string[] = [];
    for (const [pointer, node] of nodes(schema)) {
      if (pointer.endsWith('/properties') || conditional(pointer)) continue;
      const properties = node.properties as Node | undefined;
      if (properties === undefined || Object.values(properties).every((p) => p === true)) continue;
      if (node.additionalProperties !== false) open.push(pointer);
    }
    assert.deepEqual(open, []);
    // The maps whose keys are the user's: values are described by a schema, never left open.
    for (const [pointer, node] of nodes(schema)) {
      if (pointer.endsWith('/properties')) continue;
      if (node.type === 'object' && node.properties === undefined && node.discriminator === undefined) {
        assert.equal(typeof node.additionalProperties, 'object', pointer);
      }
    }
  });

  it('marks secrets with x-secret, and offers a <field>_file beside each', () => {
    const secrets = nodes(schema).flatMap(([pointer, node]) =>
      Object.entries((node.properties ?? {}) as Node)
        .filter(([, p]) => (p as Node)['x-secret'] === true)
        .map(([key]) => {
          assert.ok(Object.hasOwn(node.properties as Node, `${key}_file`), `${pointer}: ${key}_file`);
          return key;
        }),
    );
    // url: the connection URL of db and warehouse sources (it may carry a password).
    assert.deepEqual(secrets.sort(), ['client_secret', 'key', 'token', 'url', 'url']);
  });

  it('the examples name the schema for the YAML language server', () => {
    for (const name of ['sandbox-casino.yaml', 'sandbox-prop.yaml', 'replica-prop.yaml', 'warehouse-casino.yaml']) {
      const text = readFileSync(join(packageRoot(), 'config', 'partners', name), 'utf8');
      assert.match(text.split('\n')[0] ?? '', /^# yaml-language-server: \$schema=\.\.\/\.\.\/src\/config\/partner-definition\.schema\.json$/);
    }
  });

  it('chooses the stream schema by source.type', () => {
    const conditions = (schema.allOf as Node[]).map((branch) => {
      const source = ((branch.if as Node).properties as Node).source as Node;
      const type = ((source.properties as Node).type as Node).const;
      const streams = ((branch.then as Node).properties as Node).streams as Node;
      return [type, streams.$ref];
    });
    assert.deepEqual(conditions, [
      ['rest', '#/$defs/restStreams'],
      ['db', '#/$defs/dbStreams'],
      ['warehouse', '#/$defs/warehouseStreams'],
    ]);
    // Every kind offers the same three streams as the top level.
    const top = Object.keys(((schema.properties as Node).streams as Node).properties as Node);
    for (const kind of ['restStreams', 'dbStreams', 'warehouseStreams']) {
      assert.deepEqual(Object.keys(((schema.$defs as Node)[kind] as Node).properties as Node), top, kind);
    }
  });
});
