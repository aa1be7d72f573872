import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join, sep } from 'node:path';
import { BULK_LIMIT, createSpecValidator, specValidator } from '../../src/spec/validator.js';
import type { Entity, Variant } from '../../src/types.js';
import { FULL, tempDir } from './fixtures.js';

describe('spec validator', () => {
  const validator = createSpecValidator();

  it('BULK_LIMIT is the spec’s 1000 records per bulk payload', () => assert.equal(BULK_LIMIT, 1000));

  it('a bulk payload of 1000 records is within the limit', () => {
    assert.deepEqual(validator.validateBulk(new Array(1000).fill(FULL.igaming.activity)), []);
    assert.deepEqual(validator.validateBulk([]), []);
  });

  it('a bulk payload of 1001 records is rejected as a whole', () => {
    assert.deepEqual(validator.validateBulk(new Array(1001).fill(FULL.igaming.activity)), [
      { field: '(payload)', rule: 'maxItems', message: 'bulk payload has 1001 records; at most 1000 are allowed (spec §8)' },
    ]);
  });

  it('schemaFile names the schema under src/spec/schemas, and the file exists', () => {
    const file = validator.schemaFile('igaming', 'transactions');
    assert.ok(file.endsWith(['src', 'spec', 'schemas', 'igaming', 'transactions.schema.json'].join(sep)), file);
    assert.ok(existsSync(file));
  });

  it('the valid result is one shared, frozen empty array (no allocation per valid record)', () => {
    const first = validator.validate('igaming', 'activity', FULL.igaming.activity);
    const second = validator.validate('prop-trading', 'activity', FULL['prop-trading'].activity);
    assert.deepEqual(first, []);
    assert.equal(first, second);
    assert.ok(Object.isFrozen(first));
  });

  it('an unknown variant or entity is a programming error naming the allowed ones', () => {
    assert.throws(() => validator.validate('casino' as Variant, 'customers', {}), /unknown variant\/entity casino\/customers \(variants: igaming, prop-trading; entities: customers, transactions, activity\)/);
    assert.throws(() => validator.validate('igaming', 'toString' as Entity, {}), /unknown variant\/entity igaming\/toString/);
    assert.throws(() => validator.schemaFile('igaming', 'players' as Entity), /unknown variant\/entity/);
  });

  it('specValidator() is created once and shared', () => {
    assert.equal(specValidator(), specValidator());
  });

  describe('with schemaDir passed in', () => {
    const dir = tempDir();
    after(() => dir.remove());

    it('reads the schemas from there', () => {
      for (const variant of ['igaming', 'prop-trading'] as const) {
        mkdirSync(join(dir.path, variant));
        for (const entity of ['customers', 'transactions', 'activity'] as const) {
          copyFileSync(validator.schemaFile(variant, entity), join(dir.path, variant, `${entity}.schema.json`));
        }
      }
      const own = createSpecValidator({ schemaDir: dir.path });
      assert.equal(own.schemaFile('igaming', 'customers'), join(dir.path, 'igaming', 'customers.schema.json'));
      assert.deepEqual(own.validate('igaming', 'customers', FULL.igaming.customers), []);
    });

    it('a missing or broken schema fails creation, naming the file', () => {
      assert.throws(() => createSpecValidator({ schemaDir: join(dir.path, 'nowhere') }), /cannot read schema .*nowhere.*igaming.*customers\.schema\.json/);
      mkdirSync(join(dir.path, 'igaming'), { recursive: true });
      dir.write('igaming/customers.schema.json', '{"type": "object", "maxSignificantDigits": "x"}');
      assert.throws(() => createSpecValidator({ schemaDir: dir.path }), /cannot compile schema .*customers\.schema\.json/);
      dir.write('igaming/customers.schema.json', '{ not json');
      assert.throws(() => createSpecValidator({ schemaDir: dir.path }), /cannot parse schema .*customers\.schema\.json/);
    });
  });
});
