/**
 * Every rule of the six schemas (spec §2, §8), each with records that pass and records that break
 * it, checked through the validator the service uses: exact (field, rule) pairs and the parts of
 * the message a partner acts on.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createSpecValidator } from '../../src/spec/validator.js';
import { ENTITIES, VARIANTS } from '../../src/types.js';
import type { Entity, Variant, Violation } from '../../src/types.js';
import { FULL, REQUIRED, minimal } from './fixtures.js';

const validator = createSpecValidator();

interface Invalid {
  value: unknown;
  /** The rules broken, when more than the case's own rule. */
  rules?: string[];
  /** Parts the message must contain. */
  says?: string[];
}

interface RuleCase {
  field: string;
  rule: string;
  valid: unknown[];
  invalid: Invalid[];
  /** Personal data: the value must never appear in a message. */
  personal?: boolean;
}

const long = (n: number, c = 'x'): string => c.repeat(n);

function typeCase(field: string, expected: string, valid: unknown[], wrong: unknown = 42): RuleCase {
  return {
    field,
    rule: 'type',
    valid,
    invalid: [
      { value: wrong, says: [`${field}: must be ${expected}`, `(got ${typeof wrong}`] },
      { value: { nested: true }, says: [`${field}: must be ${expected}`, '(got object)'] },
      { value: [1], says: ['(got array)'] },
    ],
  };
}

function identifier(field: string): RuleCase[] {
  return [
    typeCase(field, 'a string', ['a', 'X-1/2']),
    { field, rule: 'minLength', valid: ['x'], invalid: [{ value: '', says: [`${field}: must not be empty (identifiers are non-empty strings)`] }] },
    {
      field,
      rule: 'maxLength',
      valid: [long(500)],
      invalid: [{ value: long(501), says: [`${field}: must have at most 500 characters`, `(got 501: "${long(40)}..."`] }],
    },
  ];
}

function text(field: string, personal = false): RuleCase[] {
  return [
    { ...typeCase(field, 'a string', ['', 'some text'], 424242), personal },
    {
      field,
      rule: 'maxLength',
      valid: ['', long(500)],
      invalid: [{ value: long(501, 'q'), says: [`${field}: must have at most 500 characters`, '(got 501'] }],
      personal,
    },
  ];
}

function dateTime(field: string): RuleCase[] {
  const rule = `${field}: must be an ISO 8601 date-time with time zone, e.g. 2024-05-01T12:00:00Z`;
  return [
    typeCase(field, 'a string', ['2024-05-01T12:00:00Z'], 1714564800),
    {
      field,
      rule: 'format',
      valid: ['2024-02-29T10:00:00Z', '2024-05-01T12:00:00.123456+05:30', '2024-12-31T23:59:59-08:00', '2024-05-01t12:00:00z'],
      invalid: [
        { value: '2024-13-01', says: [rule, '(got "2024-13-01")'] },
        { value: '2023-02-29T10:00:00Z', says: [rule, '(got "2023-02-29T10:00:00Z")'] },
        { value: '2024-04-31T10:00:00Z' },
        { value: '2024-13-01T00:00:00Z' },
        { value: '2024-05-01T24:00:00Z' },
        { value: '2024-05-01T12:00:00', says: [rule] },
        { value: '2024-05-01' },
        { value: 'yesterday' },
      ],
    },
    {
      field,
      rule: 'maxLength',
      valid: [`2024-05-01T12:00:00.${long(479, '0')}Z`],
      invalid: [{ value: `2024-05-01T12:00:00.${long(480, '0')}Z`, says: ['must have at most 500 characters'] }],
    },
  ];
}

function calendarDate(field: string): RuleCase[] {
  const rule = `${field}: must be a calendar date YYYY-MM-DD, e.g. 2024-05-01`;
  return [
    typeCase(field, 'a string', ['2024-05-01'], 20240501),
    {
      field,
      rule: 'format',
      valid: ['2024-02-29', '2023-02-28', '2024-04-30', '2000-02-29'],
      invalid: [
        { value: '2023-02-29', says: [rule, '(got "2023-02-29")'] },
        { value: '2024-04-31', says: [rule] },
        { value: '1900-02-29' },
        { value: '2024-13-01' },
        { value: '2024-5-1' },
        { value: '20240501' },
        { value: '2024-05-01T00:00:00Z' },
      ],
    },
    { field, rule: 'maxLength', valid: ['2024-05-01'], invalid: [{ value: long(501, '2'), rules: ['format', 'maxLength'] }] },
  ];
}

function code(field: string, valid: string[], invalid: string[], rule: string): RuleCase[] {
  return [
    typeCase(field, field === 'currency' ? 'a string' : 'a string or null', valid),
    {
      field,
      rule: 'pattern',
      valid,
      invalid: invalid.map((value) => ({ value, says: [`${field}: ${rule}`, `(got ${JSON.stringify(value)})`] })),
    },
    { field, rule: 'maxLength', valid, invalid: [{ value: long(501, 'A'), rules: ['maxLength', 'pattern'] }] },
  ];
}

const currency = (): RuleCase[] =>
  code('currency', ['EUR', 'USD', 'BRL'], ['eur', 'EURO', 'EU', 'E1R', ' EUR'], 'must be an ISO 4217 three-letter upper-case currency code, e.g. EUR');

function email(): RuleCase[] {
  return [
    { ...typeCase('email', 'a string or null', ['a@example.com'], 777123), personal: true },
    {
      field: 'email',
      rule: 'format',
      valid: ['ada@example.com', 'first.last+tag@sub.example.co.uk'],
      invalid: [{ value: 'secret-person.example.com', says: ['email: must be a valid e-mail address'] }, { value: 'secret@' }, { value: '@secret.example' }],
      personal: true,
    },
    {
      field: 'email',
      rule: 'maxLength',
      valid: [`${long(488, 'a')}@example.com`],
      invalid: [{ value: `${long(489, 's')}@example.com`, says: ['email: must have at most 500 characters', '(got 501)'] }],
      personal: true,
    },
  ];
}

function oneOf(field: string, values: string[], wrong: string[], nullable: boolean): RuleCase[] {
  return [
    typeCase(field, nullable ? 'a string or null' : 'a string', values.slice(0, 1)),
    {
      field,
      rule: 'enum',
      valid: values,
      invalid: wrong.map((value) => ({ value, says: [`${field}: must be one of ${values.join(', ')} (got ${JSON.stringify(value)})`] })),
    },
    { field, rule: 'maxLength', valid: values.slice(-1), invalid: [{ value: long(501), rules: ['enum', 'maxLength'] }] },
  ];
}

interface NumberRules {
  integer?: boolean;
  min0?: boolean;
  dec2?: boolean;
  nullable?: boolean;
}

function numeric(field: string, rules: NumberRules, valid: number[]): RuleCase[] {
  const kind = rules.integer ? 'an integer' : 'a number';
  const cases: RuleCase[] = [
    {
      field,
      rule: 'type',
      valid,
      invalid: [
        { value: '12.5', says: [`${field}: must be ${kind}${rules.nullable ? ' or null' : ''}`, '(got string "12.5")'] },
        { value: true },
        ...(rules.integer ? [{ value: 1.5, says: [`${field}: must be an integer`, '(got number 1.5)'] }] : []),
      ],
    },
    {
      field,
      rule: 'maxSignificantDigits',
      valid: [999999999999999, ...(rules.integer ? [] : [1234567890123.45]), ...(rules.integer || rules.dec2 ? [] : [0.000000000000001])],
      invalid: [
        { value: 1e15, says: [`${field}: more than 15 significant digits (1000000000000000)`] },
        { value: 1234567890123456, says: ['(1234567890123456)'] },
        ...(rules.dec2 ? [] : rules.integer ? [] : [{ value: 0.1234567890123456, says: ['(0.1234567890123456)'] }]),
      ],
    },
  ];
  if (rules.min0) {
    cases.push({
      field,
      rule: 'minimum',
      valid: rules.integer ? [0, 1] : [0, 0.01],
      invalid: [{ value: -1, says: [`${field}: must be >= 0 (got -1)`] }, { value: rules.integer ? -3 : -0.01 }],
    });
  }
  if (rules.dec2) {
    cases.push({
      field,
      rule: 'maxDecimalPlaces',
      valid: [10, 10.1, 10.12, 1234567890123.45],
      invalid: [
        { value: 10.123, says: [`${field}: more than 2 decimal places (10.123)`] },
        { value: 1e-7, says: ['more than 2 decimal places (1e-7)'] },
        { value: 0.1 + 0.2, rules: ['maxDecimalPlaces', 'maxSignificantDigits'], says: ['(0.30000000000000004)'] },
      ],
    });
  }
  return cases;
}

function customerCases(variant: Variant): RuleCase[] {
  const cases = [
    ...identifier('customer_id'),
    ...dateTime('signup_date'),
    ...identifier('affiliate_id'),
    ...dateTime('last_modified_date').map((c) => (c.rule === 'type' ? typeCase('last_modified_date', 'a string or null', c.valid, 1714564800) : c)),
    ...identifier('campaign_id').map((c) => (c.rule === 'type' ? typeCase('campaign_id', 'a string or null', c.valid) : c)),
    ...identifier('click_id').map((c) => (c.rule === 'type' ? typeCase('click_id', 'a string or null', c.valid) : c)),
    ...code('lang_id', ['en', 'de'], ['EN', 'eng', 'e', 'e1'], 'must be an ISO 639-1 two-letter lower-case language code, e.g. en'),
    ...code('country_code', ['DE', 'GB'], ['de', 'DEU', 'D', 'D1'], 'must be an ISO 3166-1 alpha-2 upper-case country code, e.g. DE'),
    ...identifier('kyc_status_id').map((c) => (c.rule === 'type' ? typeCase('kyc_status_id', 'a string or null', c.valid) : c)),
    ...identifier('sales_status_id').map((c) => (c.rule === 'type' ? typeCase('sales_status_id', 'a string or null', c.valid) : c)),
    ...text('first_name', true),
    ...text('last_name', true),
    ...email(),
  ];
  if (variant === 'prop-trading') {
    cases.push(
      ...text('challenge_type'),
      ...oneOf('phase', ['phase_1', 'phase_2', 'funded', 'failed'], ['phase_3', 'Funded', ''], true),
      ...numeric('account_size', { min0: true, nullable: true }, [0, 5000, 100000, 250000.5]),
    );
  }
  return cases;
}

function transactionCases(variant: Variant): RuleCase[] {
  const types =
    variant === 'igaming'
      ? ['deposit', 'withdrawal', 'bonus', 'adjustment', 'other']
      : ['challenge_fee', 'payout', 'reset_fee', 'refund', 'adjustment', 'other'];
  // The other variant's own types are wrong here.
  const wrong = variant === 'igaming' ? ['payment', 'challenge_fee', 'Deposit'] : ['deposit', 'bonus', 'fee'];
  return [
    ...identifier('transaction_id'),
    ...identifier('customer_id'),
    ...oneOf('transaction_type', types, wrong, false),
    ...numeric('amount_currency', { dec2: true }, [100.5, -25.5, 0, 1234567890123.45, -0.01]),
    ...currency(),
    ...dateTime('transaction_date'),
    ...text('status'),
    ...numeric('amount_usd', { nullable: true }, [108.54, -12.345678, 0]),
    ...text('transaction_subtype'),
    ...text('note'),
  ];
}

function activityCases(variant: Variant): RuleCase[] {
  if (variant === 'igaming') {
    return [
      ...calendarDate('date'),
      ...identifier('customer_id'),
      ...identifier('game_type'),
      ...currency(),
      ...numeric('bets_count', { integer: true, min0: true, nullable: true }, [0, 1, 120, 5.0]),
      ...numeric('total_bets', { min0: true, nullable: true }, [0, 250.5, 99.999]),
      ...numeric('wins', { min0: true, nullable: true }, [0, 200.25]),
      ...numeric('ggr', { nullable: true }, [50.25, -150.75, 0]),
      ...numeric('ngr', { nullable: true }, [45, -160.1, 0]),
    ];
  }
  return [
    ...calendarDate('date'),
    ...identifier('customer_id'),
    ...identifier('instrument'),
    ...numeric('lots_traded', { min0: true, dec2: true }, [0, 0.01, 12.5, 1000]),
    ...numeric('pnl', {}, [-340.75, 1250.333, 0]),
    ...currency(),
    ...numeric('drawdown', { min0: true, nullable: true }, [0, 2.5, 4.875]),
    ...numeric('max_drawdown', { min0: true, nullable: true }, [0, 6.25, 10]),
  ];
}

const CASES: Record<Entity, (variant: Variant) => RuleCase[]> = {
  customers: customerCases,
  transactions: transactionCases,
  activity: activityCases,
};

/** The keywords a property schema can carry; each one present must have a case. */
const PROPERTY_RULES = ['type', 'minLength', 'maxLength', 'pattern', 'format', 'enum', 'minimum', 'maxSignificantDigits', 'maxDecimalPlaces'];

const pairs = (violations: Violation[]) => violations.map((v) => `${v.field}/${v.rule}`).sort();

function loadSchema(variant: Variant, entity: Entity): { required: string[]; properties: Record<string, Record<string, unknown>> } & Record<string, unknown> {
  return JSON.parse(readFileSync(validator.schemaFile(variant, entity), 'utf8')) as ReturnType<typeof loadSchema>;
}

for (const variant of VARIANTS) {
  for (const entity of ENTITIES) {
    describe(`schema ${variant}/${entity}`, () => {
      const check = (record: unknown) => validator.validate(variant, entity, record);
      const full = FULL[variant][entity];
      const required = REQUIRED[variant][entity];
      const optional = Object.keys(full).filter((f) => !required.includes(f));
      const cases = CASES[entity](variant);

      it('has a case for every rule of every property (and no case for a rule it lacks)', () => {
        const schema = loadSchema(variant, entity);
        const inSchema = Object.entries(schema.properties).flatMap(([field, property]) =>
          PROPERTY_RULES.filter((rule) => rule in property).map((rule) => `${field}/${rule}`),
        );
        const covered = [...new Set(cases.map((c) => `${c.field}/${c.rule}`))];
        assert.deepEqual(covered.sort(), inSchema.sort());
      });

      it('lists the spec fields, and exactly the required ones as required', () => {
        const schema = loadSchema(variant, entity);
        assert.deepEqual(Object.keys(schema.properties).sort(), Object.keys(full).sort());
        assert.deepEqual([...schema.required].sort(), [...required].sort());
      });

      it('accepts a record with every field', () => assert.deepEqual(check(full), []));
      it('accepts a record with only the required fields', () => assert.deepEqual(check(minimal(variant, entity)), []));

      for (const field of required) {
        it(`${field}: missing → required`, () => {
          const record = { ...full };
          delete record[field];
          const violations = check(record);
          assert.deepEqual(pairs(violations), [`${field}/required`]);
          assert.equal(violations[0]?.message, `${field}: required field is missing`);
        });
        it(`${field}: null → required (not type)`, () => {
          const violations = check({ ...full, [field]: null });
          assert.deepEqual(pairs(violations), [`${field}/required`]);
          assert.equal(violations[0]?.message, `${field}: must not be null (required field)`);
        });
      }
      for (const field of optional) {
        it(`${field}: optional, null is accepted (treated as absent)`, () => assert.deepEqual(check({ ...full, [field]: null }), []));
      }

      it('an unknown property → additionalProperties, listing the allowed ones', () => {
        const violations = check({ ...full, foo: 'bar' });
        assert.deepEqual(pairs(violations), ['foo/additionalProperties']);
        assert.equal(violations[0]?.message, `foo: unknown property (allowed: ${Object.keys(loadSchema(variant, entity).properties).join(', ')})`);
      });

      it('reports every broken rule of a record, one per (field, rule)', () => {
        const violations = check({ ...full, foo: 1, bar: 2, [required[0] as string]: null });
        assert.deepEqual(pairs(violations), [`${required[0]}/required`, 'bar/additionalProperties', 'foo/additionalProperties'].sort());
      });

      for (const [record, kind] of [[[full], 'array'], ['text', 'string'], [42, 'number'], [null, 'null'], [true, 'boolean']] as const) {
        it(`a ${kind} instead of an object → (record)/type`, () => {
          const violations = check(record);
          assert.deepEqual(violations, [{ field: '(record)', rule: 'type', message: `record must be a JSON object (got ${kind})` }]);
        });
      }

      for (const c of cases) {
        describe(`${c.field}: ${c.rule}`, () => {
          for (const value of c.valid) {
            it(`accepts ${preview(value)}`, () => assert.deepEqual(check({ ...full, [c.field]: value }), []));
          }
          for (const bad of c.invalid) {
            it(`rejects ${preview(bad.value)}`, () => {
              const violations = check({ ...full, [c.field]: bad.value });
              assert.deepEqual(pairs(violations), (bad.rules ?? [c.rule]).map((r) => `${c.field}/${r}`).sort());
              const message = violations.find((v) => v.rule === c.rule)?.message ?? '';
              assert.ok(message.startsWith(`${c.field}: `), message);
              for (const part of bad.says ?? []) assert.ok(message.includes(part), `${JSON.stringify(message)} should contain ${JSON.stringify(part)}`);
              if (c.personal && typeof bad.value !== 'object') {
                for (const v of violations) {
                  assert.ok(!v.message.includes(String(bad.value).slice(0, 6)), `personal data in ${JSON.stringify(v.message)}`);
                }
              }
            });
          }
        });
      }
    });
  }
}

describe('schema documents', () => {
  for (const variant of VARIANTS) {
    for (const entity of ENTITIES) {
      it(`${variant}/${entity} is a self-contained, documented draft 2020-12 schema with the spec's general rules`, () => {
        const schema = loadSchema(variant, entity);
        assert.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
        assert.equal(schema.$id, `https://partner-sync.example/schemas/${variant}/${entity}.schema.json`);
        assert.equal(typeof schema.title, 'string');
        assert.equal(typeof schema.description, 'string');
        assert.equal(schema.additionalProperties, false);
        assert.ok(!JSON.stringify(schema).includes('"$ref"'), 'no $ref: one file is handed to a partner');
        for (const [field, property] of Object.entries(schema.properties)) {
          const types = ([] as unknown[]).concat(property.type);
          const description = String(property.description ?? '');
          assert.ok(description.length > 20, `${field} has a description`);
          assert.equal(types.includes('null'), !schema.required.includes(field), `${field}: null allowed exactly when optional`);
          if (types.includes('string')) assert.equal(property.maxLength, 500, `${field} maxLength`);
          if (types.includes('number') || types.includes('integer')) {
            assert.equal(property.maxSignificantDigits, 15, `${field} maxSignificantDigits`);
            assert.match(description, /15 significant digits/);
          }
          if ('maxDecimalPlaces' in property) assert.match(description, /2 decimal places/);
          if ('minLength' in property) assert.match(description, /identifiers are non-empty strings/i);
        }
        const decimals = Object.entries(schema.properties).filter(([, p]) => p.maxDecimalPlaces === 2).map(([f]) => f);
        assert.deepEqual(decimals, { transactions: ['amount_currency'], activity: variant === 'igaming' ? [] : ['lots_traded'], customers: [] }[entity]);
      });
    }
  }

  it('a prop-trading field on an iGaming record is an unknown property, and the other way round', () => {
    const violations = validator.validate('igaming', 'customers', { ...FULL.igaming.customers, phase: 'funded' });
    assert.deepEqual(pairs(violations), ['phase/additionalProperties']);
    const activity = validator.validate('prop-trading', 'activity', { ...FULL['prop-trading'].activity, game_type: 'slots' });
    assert.deepEqual(pairs(activity), ['game_type/additionalProperties']);
  });
});

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 37)}... (${text.length} chars)` : text;
}

