/**
 * The JSON-Schema-Test-Suite's `date-time`, `date` and `email` cases (test/fixtures/
 * json-schema-test-suite, MIT) through the record validator: each value in a field of that
 * format, valid exactly when the suite says so, except the deliberate deviations below. A
 * deviation that no longer deviates fails too, so the list stays true.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../src/paths.js';
import { createSpecValidator } from '../../src/spec/validator.js';
import type { Entity, SpecRecord } from '../../src/types.js';
import { customer, gaming } from '../support/records.js';

interface SuiteCase { description: string; data: unknown; valid: boolean }
interface SuiteGroup { description: string; tests: SuiteCase[] }

const suiteFile = (name: string): SuiteGroup[] =>
  JSON.parse(readFileSync(join(packageRoot(), 'test', 'fixtures', 'json-schema-test-suite', `${name}.json`), 'utf8')) as SuiteGroup[];

/** Where a format's value goes: a field of that format in one of the spec's records. */
const FIELDS: Record<string, { entity: Entity; field: string; record: (value: unknown) => SpecRecord }> = {
  'date-time': { entity: 'customers', field: 'signup_date', record: (value) => customer('c1', { signup_date: value as string }) },
  date: { entity: 'activity', field: 'date', record: (value) => gaming(value as string, 'c1') },
  email: { entity: 'customers', field: 'email', record: (value) => customer('c1', { email: value as string }) },
};

/** The suite's value → why this service decides otherwise (docs/loading.md, src/kernel/timestamp.ts). */
const DEVIATIONS: Record<string, Record<string, string>> = {
  'date-time': {
    '1998-12-31T23:59:60Z': 'a leap second is valid RFC 3339 but no store can hold it (timestamptz has no second 60): rule leapSecond',
    '1998-12-31T15:59:60.123-08:00': 'a leap second is valid RFC 3339 but no store can hold it (timestamptz has no second 60): rule leapSecond',
  },
  date: {},
  email: {},
};

const validator = createSpecValidator();

type Outcome = { agreed: true } | { deviation: string } | { failure: string };

/** One suite case through the validator, judged against the suite and the deviations. */
function judge(format: string, test: SuiteCase): Outcome {
  const { entity, field, record } = FIELDS[format]!;
  const violations = validator.validate('igaming', entity, record(test.data)).filter((v) => v.field === field);
  if (typeof test.data !== 'string') {
    // "all string formats ignore ...": the format says nothing of a non-string (the field's type rule does).
    const format = violations.filter((v) => v.rule === 'format');
    return format.length === 0 ? { agreed: true } : { failure: `a format violation for a non-string: ${JSON.stringify(format)}` };
  }
  const valid = violations.length === 0;
  const deviation = DEVIATIONS[format]![test.data];
  if (deviation !== undefined) {
    return valid !== test.valid ? { deviation } : { failure: `listed as a deviation (${deviation}) but agrees with the suite` };
  }
  if (valid !== test.valid) return { failure: `the suite says ${test.valid ? 'valid' : 'invalid'}; violations: ${JSON.stringify(violations)}` };
  // an invalid value is refused by the format rule itself, naming the field
  if (!test.valid && !violations.some((v) => v.rule === 'format' && v.message.startsWith(`${field}: `))) {
    return { failure: `refused, but not by the format rule: ${JSON.stringify(violations)}` };
  }
  return { agreed: true };
}

const FORMATS = ['date-time', 'date', 'email'];

describe('the JSON-Schema-Test-Suite format cases through the record validator', () => {
  for (const format of FORMATS) {
    describe(format, () => {
      for (const group of suiteFile(format)) {
        for (const test of group.tests) {
          const listed = typeof test.data === 'string' && DEVIATIONS[format]![test.data] !== undefined;
          it(`${test.valid ? 'valid' : 'invalid'}${listed ? ' in the suite, refused here' : ''}: ${JSON.stringify(test.data)} (${test.description})`, () => {
            const outcome = judge(format, test);
            if ('failure' in outcome) assert.fail(outcome.failure);
          });
        }
      }
    });
  }

  it('runs every case: all agree but the listed deviations', () => {
    const counts = { run: 0, agreed: 0, deviations: 0 };
    for (const format of FORMATS) {
      for (const group of suiteFile(format)) {
        for (const test of group.tests) {
          counts.run += 1;
          const outcome = judge(format, test);
          if ('agreed' in outcome) counts.agreed += 1;
          else if ('deviation' in outcome) counts.deviations += 1;
        }
      }
    }
    const listed = Object.values(DEVIATIONS).reduce((n, d) => n + Object.keys(d).length, 0);
    assert.deepEqual(counts, { run: counts.run, agreed: counts.run - listed, deviations: listed });
    assert.ok(counts.run >= 130, `${counts.run} cases`);
  });
});
