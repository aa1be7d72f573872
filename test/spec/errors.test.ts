import assert from 'node:assert/strict';
import type { ErrorObject } from 'ajv/dist/2020.js';
import { PERSONAL_DATA_FIELDS, toViolations } from '../../src/spec/errors.js';
import type { SchemaFacts } from '../../src/spec/errors.js';
import { createSpecValidator } from '../../src/spec/validator.js';
import { FULL } from './fixtures.js';

const facts: SchemaFacts = { properties: ['customer_id', 'currency', 'first_name'], required: new Set(['customer_id']) };

const error = (keyword: string, instancePath: string, params: Record<string, unknown>): ErrorObject => ({
  keyword,
  instancePath,
  schemaPath: `#/properties${instancePath}/${keyword}`,
  params,
  message: 'ajv says no',
});

describe('spec errors: ajv errors to violations', () => {
  it('keeps one violation per (field, rule): a union type error reported twice counts once', () => {
    const record = { currency: 5 };
    const violations = toViolations(
      [error('type', '/currency', { type: 'string,null' }), error('type', '/currency', { type: 'string,null' })],
      record,
      facts,
    );
    assert.deepEqual(violations, [{ field: 'currency', rule: 'type', message: 'currency: must be a string or null (got number 5)' }]);
  });

  it('a wrong type hides the other rules of the same field, not those of other fields', () => {
    const record = { customer_id: 7, currency: 'eur' };
    const violations = toViolations(
      [
        error('type', '/customer_id', { type: 'string' }),
        error('enum', '/customer_id', { allowedValues: ['a'] }),
        error('pattern', '/currency', { pattern: '^[A-Z]{3}$' }),
      ],
      record,
      facts,
    );
    assert.deepEqual(
      violations.map((v) => [v.field, v.rule]),
      [
        ['customer_id', 'type'],
        ['currency', 'pattern'],
      ],
    );
  });

  it('null in a required field is rule required; in an optional one it is a type error', () => {
    const violations = toViolations(
      [error('type', '/customer_id', { type: 'string' }), error('type', '/currency', { type: 'string' })],
      { customer_id: null, currency: null },
      facts,
    );
    assert.deepEqual(violations, [
      { field: 'customer_id', rule: 'required', message: 'customer_id: must not be null (required field)' },
      { field: 'currency', rule: 'type', message: 'currency: must be a string (got null)' },
    ]);
  });

  it('the field of a nested path is its top-level property (JSON pointer escapes decoded)', () => {
    const violations = toViolations([error('type', '/a~1b~0c/0', { type: 'string' })], { 'a/b~c': [1] }, facts);
    assert.equal(violations[0]?.field, 'a/b~c');
  });

  it('an unknown keyword falls back to ajv message, still naming field and value', () => {
    const violations = toViolations([error('multipleOf', '/currency', { multipleOf: 2 })], { currency: 3 }, facts);
    assert.deepEqual(violations, [{ field: 'currency', rule: 'multipleOf', message: 'currency: ajv says no (got 3)' }]);
  });

  it('cuts long values to 40 characters, saying how long they were', () => {
    const value = 'abcdefghij'.repeat(10);
    const violations = toViolations([error('pattern', '/currency', { pattern: '^[A-Z]{3}$' })], { currency: value }, facts);
    assert.equal(
      violations[0]?.message,
      `currency: must be an ISO 4217 three-letter upper-case currency code, e.g. EUR (got "${value.slice(0, 40)}..." (100 characters))`,
    );
  });
});

describe('spec errors: personal data never appears in a message', () => {
  const validator = createSpecValidator();
  const base = FULL.igaming.customers;

  it('personal data are first_name, last_name and email (spec §2.1)', () => {
    assert.deepEqual([...PERSONAL_DATA_FIELDS].sort(), ['email', 'first_name', 'last_name']);
  });

  const leaks: [string, unknown, string][] = [
    ['first_name', 'Zebulon'.repeat(80), 'Zebulon'],
    ['first_name', 31337, '31337'],
    ['last_name', 'Quixote'.repeat(80), 'Quixote'],
    ['last_name', false, 'false'],
    ['email', 'zebulon.quixote-at-example.com', 'zebulon'],
    ['email', `${'zebulon'.repeat(80)}@example.com`, 'zebulon'],
    ['email', 99887766, '99887766'],
  ];
  for (const [field, value, secret] of leaks) {
    it(`${field} = ${JSON.stringify(value).slice(0, 30)}: the message names the rule, not the value`, () => {
      const violations = validator.validate('igaming', 'customers', { ...base, [field]: value });
      assert.equal(violations.length, 1);
      assert.equal(violations[0]?.field, field);
      assert.ok(!violations[0]?.message.includes(secret), violations[0]?.message);
    });
  }

  it('the same kind of value in a non-personal field is shown', () => {
    const violations = validator.validate('igaming', 'customers', { ...base, sales_status_id: 31337 });
    assert.match(violations[0]?.message ?? '', /31337/);
  });
});
