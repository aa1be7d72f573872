/**
 * The schemas the service compiles without checking them against JSON Schema's meta-schema at
 * every start (the plans, the connector definitions, the fraud rules' settings, the spec's six
 * record schemas): each is a valid draft 2020-12 schema, checked here instead.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { plansSchemaFile } from '../../src/commission/load-plans.js';
import { definitionSchemaFile } from '../../src/config/definition-schema.js';
import { fraudSchema } from '../../src/fraud/config.js';
import { specKeywords } from '../../src/spec/keywords.js';
import { defaultSchemaDir } from '../../src/spec/validator.js';
import { ENTITIES, VARIANTS } from '../../src/types.js';

const readJson = (file: string): object => JSON.parse(readFileSync(file, 'utf8')) as object;

function metaChecker(): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, discriminator: true });
  for (const keyword of specKeywords) ajv.addKeyword(keyword);
  return ajv;
}

describe('the shipped schemas against the draft 2020-12 meta-schema', () => {
  const schemas: [string, object][] = [
    ['commissions.schema.json', readJson(plansSchemaFile())],
    ['partner-definition.schema.json', readJson(definitionSchemaFile())],
    ['fraud settings', fraudSchema()],
    ...VARIANTS.flatMap((v) => ENTITIES.map((e): [string, object] => [`spec ${v}/${e}`, readJson(join(defaultSchemaDir(), v, `${e}.schema.json`))])),
  ];
  for (const [name, schema] of schemas) {
    it(`${name} is valid`, () => {
      const ajv = metaChecker();
      assert.equal(ajv.validateSchema(schema), true, ajv.errorsText(ajv.errors));
    });
  }

  it('a schema that is not valid is told apart', () => {
    const ajv = metaChecker();
    assert.equal(ajv.validateSchema({ type: 'object', properties: { amount: { type: 'money' } } }), false);
    assert.match(ajv.errorsText(ajv.errors), /type/);
  });
});
