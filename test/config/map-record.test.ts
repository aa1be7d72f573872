import assert from 'node:assert/strict';
import type { FieldRule, PartnerDefinition } from '../../src/config/definition.js';
import { createMapper } from '../../src/pipeline/map-record.js';
import { specFields } from '../../src/config/mapping-rules.js';
import type { MapResult } from '../../src/pipeline/map-record.js';
import type { Entity, Variant } from '../../src/types.js';

const KEEP: PartnerDefinition['affiliates'] = { map: {}, unmapped: 'keep' };

function mapper(fields: Record<string, FieldRule>, options: { variant?: Variant; entity?: Entity; passthrough?: boolean; affiliates?: PartnerDefinition['affiliates'] } = {}) {
  return createMapper(options.variant ?? 'igaming', options.entity ?? 'customers', { fields, passthrough: options.passthrough ?? true }, options.affiliates ?? KEEP);
}

const record = (result: MapResult): Record<string, unknown> => {
  if ('error' in result) assert.fail(`unexpected mapping error: ${result.error.message}`);
  return result.record;
};

/** The value one datetime rule gives for one input. */
function datetime(value: unknown, format?: string, zone?: string, field = 'signup_date'): unknown {
  const rule = { from: 'v', datetime: { ...(format === undefined ? {} : { format }), ...(zone === undefined ? {} : { zone }) } };
  const entity: Entity = field === 'date' ? 'activity' : 'customers';
  const result = mapper({ [field]: rule }, { entity, passthrough: false })({ v: value });
  return 'error' in result ? result.error.message : result.record[field];
}

describe('field mapping: spec fields', () => {
  it('reads the spec fields and their kinds from the spec schemas', () => {
    const fields = specFields('prop-trading', 'customers');
    assert.equal(fields.get('signup_date'), 'date-time');
    assert.equal(fields.get('account_size'), 'number');
    assert.equal(fields.get('phase'), 'string');
    assert.equal(specFields('igaming', 'activity').get('date'), 'date');
    assert.equal(specFields('igaming', 'activity').get('bets_count'), 'integer');
    assert.equal(specFields('igaming', 'customers').has('phase'), false);
  });
});

describe('field mapping: rules', () => {
  it('passthrough copies spec fields no rule targets; other source fields are dropped', () => {
    const map = mapper({ customer_id: 'player.id' });
    assert.deepEqual(record(map({ player: { id: 'c-1' }, customer_id: 'ignored', email: 'a@b.example', internal_score: 7, updated_at: 'x' })), {
      email: 'a@b.example',
      customer_id: 'c-1',
    });
  });

  it('passthrough: false copies nothing unlisted', () => {
    assert.deepEqual(record(mapper({ customer_id: 'id' }, { passthrough: false })({ id: 'c-1', email: 'a@b.example' })), { customer_id: 'c-1' });
  });

  it('rename by dot path, through arrays; a missing path leaves the field out', () => {
    const map = mapper({ customer_id: 'ids.0.value', campaign_id: 'tracking.campaign' }, { passthrough: false });
    assert.deepEqual(record(map({ ids: [{ value: 'c-9' }], tracking: { campaign: 'spring' } })), { customer_id: 'c-9', campaign_id: 'spring' });
    assert.deepEqual(record(map({ ids: [], tracking: 'flat' })), {});
  });

  it('a path never reaches prototype properties', () => {
    const map = mapper({ customer_id: 'constructor.name', campaign_id: '__proto__.x' }, { passthrough: false });
    assert.deepEqual(record(map({})), {});
  });

  it('a rule object without from reads the spec field itself', () => {
    assert.deepEqual(record(mapper({ kyc_status_id: { map: { '1': 'approved' } } }, { passthrough: false })({ kyc_status_id: 1 })), { kyc_status_id: 'approved' });
  });

  it('const', () => {
    const map = mapper({ currency: { const: 'EUR' }, transaction_type: { const: 'deposit' } }, { entity: 'transactions', passthrough: false });
    assert.deepEqual(record(map({ currency: 'USD' })), { currency: 'EUR', transaction_type: 'deposit' });
  });

  it('map: listed values are replaced; a value not listed, without a default, is a reject naming the field and the rule', () => {
    const map = mapper({ status: { from: 'st', map: { '1': 'approved', '2': 'declined', R: 'reversed' } } }, { entity: 'transactions', passthrough: false });
    assert.deepEqual(record(map({ st: 1 })), { status: 'approved' });
    assert.deepEqual(record(map({ st: 'R' })), { status: 'reversed' });
    assert.deepEqual(map({ st: 'pending' }), {
      error: { field: 'status', rule: 'mapping', message: 'status: "pending" is not in the map of status (keys "1", "2", "R"), and the rule has no default: add it to map, or give a default' },
    });
    assert.equal('error' in map({ st: 'toString' }), true);
  });

  it('map with a default: a value not listed takes the default (as does an absent one)', () => {
    const map = mapper({ transaction_type: { from: 'kind', map: { DEP: 'deposit', WDR: 'withdrawal' }, default: 'adjustment' } }, { entity: 'transactions', passthrough: false });
    assert.deepEqual(record(map({ kind: 'DEP' })), { transaction_type: 'deposit' });
    assert.deepEqual(record(map({ kind: 'CORR' })), { transaction_type: 'adjustment' });
    assert.deepEqual(record(map({})), { transaction_type: 'adjustment' });
  });

  it('case: upper or lower, after the map; a value that is not text is a mapping error', () => {
    const map = mapper({ country_code: { from: 'country', case: 'upper' }, lang_id: { from: 'lang', map: { English: 'EN' }, default: 'xx', case: 'lower' } }, { passthrough: false });
    assert.deepEqual(record(map({ country: 'de', lang: 'English' })), { country_code: 'DE', lang_id: 'en' });
    assert.deepEqual(record(map({ country: 'Mt', lang: 'Maltese' })), { country_code: 'MT', lang_id: 'xx' });
    assert.deepEqual(map({ country: 49 }), { error: { field: 'country_code', rule: 'mapping', message: 'country_code: case: upper applies to text, got 49' } });
  });

  it('the common forms: decimal strings, epoch seconds and milliseconds, minor units, constants', () => {
    const map = mapper(
      {
        amount_currency: { from: 'amt', number: true },
        amount_usd: { from: 'usd_cents', minor_units: 2 },
        transaction_date: { from: 'ts', datetime: { format: 'unix_seconds' } },
        currency: { const: 'EUR' },
      },
      { entity: 'transactions', passthrough: false },
    );
    assert.deepEqual(record(map({ amt: '12.50', usd_cents: 1999, ts: 1790000000 })), { amount_currency: 12.5, amount_usd: 19.99, transaction_date: '2026-09-21T14:13:20Z', currency: 'EUR' });
    const customers = mapper({ last_modified_date: { from: 'upd', datetime: { format: 'unix_millis' } } }, { passthrough: false });
    assert.deepEqual(record(customers({ upd: 1790000000123 })), { last_modified_date: '2026-09-21T14:13:20.123Z' });
  });

  it('number: numeric strings become numbers; anything else is a mapping error', () => {
    const map = mapper({ amount_usd: { number: true } }, { entity: 'transactions', passthrough: false });
    assert.deepEqual(record(map({ amount_usd: '12.50' })), { amount_usd: 12.5 });
    assert.deepEqual(record(map({ amount_usd: ' -3e2 ' })), { amount_usd: -300 });
    assert.deepEqual(record(map({ amount_usd: 7 })), { amount_usd: 7 });
    assert.deepEqual(map({ amount_usd: '12,50' }), { error: { field: 'amount_usd', rule: 'mapping', message: 'amount_usd: not a number: "12,50"' } });
    assert.deepEqual(map({ amount_usd: true }), { error: { field: 'amount_usd', rule: 'mapping', message: 'amount_usd: not a number: true' } });
  });

  it('minor_units: exact division, no float error', () => {
    const map = mapper({ amount_currency: { from: 'cents', minor_units: 2 }, amount_usd: { from: 'usd', minor_units: 3 } }, { entity: 'transactions', passthrough: false });
    assert.deepEqual(record(map({ cents: 1999, usd: '1005' })), { amount_currency: 19.99, amount_usd: 1.005 });
    assert.deepEqual(record(map({ cents: -1 })), { amount_currency: -0.01 });
    assert.deepEqual(record(map({ cents: 29 })), { amount_currency: 0.29 });
    assert.deepEqual(record(map({ cents: '123456789012345' })), { amount_currency: 1234567890123.45 });
    // 0.1 + 0.2-style drift never appears: every result is the double nearest the exact quotient.
    for (let cents = -10_000; cents <= 10_000; cents += 7) assert.equal(String(record(map({ cents })).amount_currency), (cents / 100).toString());
    assert.deepEqual(map({ cents: 'ten' }), { error: { field: 'amount_currency', rule: 'mapping', message: 'amount_currency: not an amount in minor units: "ten"' } });
  });

  it('multiply: an exact decimal factor (sizes kept in thousands, amounts in hundredths)', () => {
    const map = mapper({ account_size: { from: 'size_k', multiply: 1000 } }, { variant: 'prop-trading', passthrough: false });
    assert.deepEqual(record(map({ size_k: 100 })), { account_size: 100000 });
    assert.deepEqual(record(map({ size_k: '25.5' })), { account_size: 25500 });
    assert.deepEqual(record(map({ size_k: 0.001 })), { account_size: 1 });
    assert.deepEqual(record(map({ size_k: '999999999999.999' })), { account_size: 999999999999999 });
    // Decimal, not binary: 0.1 × 3 is 0.3, and 1.005 × 100 is 100.5 (a double product gives 0.30000000000000004 and 100.49999999999999).
    const tenths = mapper({ amount_currency: { from: 'a', multiply: '0.1' }, amount_usd: { from: 'u', multiply: 100 } }, { entity: 'transactions', passthrough: false });
    assert.deepEqual(record(tenths({ a: 3, u: 1.005 })), { amount_currency: 0.3, amount_usd: 100.5 });
    // After minor_units: 150 cents of a thousand → 1500.
    const both = mapper({ account_size: { from: 'c', minor_units: 2, multiply: 1000 } }, { variant: 'prop-trading', passthrough: false });
    assert.deepEqual(record(both({ c: 150 })), { account_size: 1500 });
    assert.deepEqual(map({ size_k: 'big' }), { error: { field: 'account_size', rule: 'mapping', message: 'account_size: not a number to multiply: "big"' } });
    assert.deepEqual(record(map({ size_k: null })), { account_size: null });
  });

  it('an integer for a string field becomes its decimal text: renames, rules, passthrough', () => {
    const map = mapper({ customer_id: 'id', transaction_subtype: { from: 'ref' } }, { entity: 'transactions' });
    assert.deepEqual(record(map({ id: 4711, ref: 0, transaction_id: 9007199254740991, currency: 'EUR' })), {
      transaction_id: '9007199254740991',
      currency: 'EUR',
      customer_id: '4711',
      transaction_subtype: '0',
    });
    // A BIGINT read as exact text (SQL sources, beyond 2^53) or as a bigint stays exact.
    assert.deepEqual(record(map({ id: '18446744073709551615', transaction_id: 2n ** 60n })), { customer_id: '18446744073709551615', transaction_id: '1152921504606846976' });
    // Numbers in exponent form that are integers are integers: 1e3 is 1000.
    assert.deepEqual(record(map({ id: 1e3 })), { customer_id: '1000' });
    // Number fields and constants are left as they are.
    const fixed = mapper({ customer_id: { const: 7 }, amount_currency: 'amt' }, { entity: 'transactions', passthrough: false });
    assert.deepEqual(record(fixed({ amt: 5 })), { customer_id: 7, amount_currency: 5 });
  });

  it('only integers convert: 1.5 for an id stays a number (a type error for the validator)', () => {
    const map = mapper({ customer_id: 'id' }, { passthrough: false });
    assert.deepEqual(record(map({ id: 1.5 })), { customer_id: 1.5 });
    assert.deepEqual(record(map({ id: true })), { customer_id: true });
  });

  it('an integer beyond 2^53 − 1 that JSON parsing already rounded is refused, naming the field', () => {
    const map = mapper({ customer_id: 'id' });
    const parsed = JSON.parse('{"id": 12345678901234567891}') as Record<string, unknown>;
    assert.deepEqual(map(parsed), {
      error: {
        field: 'customer_id',
        rule: 'mapping',
        message: 'customer_id: the integer 12345678901234567000 is beyond 9007199254740991 (2^53 − 1), where a JSON number is no longer read exactly: the id the partner sent is not known; send it as a string',
      },
    });
    const passthrough = map({ id: 'c-1', campaign_id: 2 ** 53 });
    assert.equal('error' in passthrough && passthrough.error.field, 'campaign_id');
  });

  it('default: when the source field is absent or null', () => {
    const map = mapper({ currency: { from: 'cur', default: 'EUR' }, status: { from: 'st', map: { '': null } } }, { entity: 'transactions', passthrough: false });
    assert.deepEqual(record(map({})), { currency: 'EUR' });
    assert.deepEqual(record(map({ cur: null, st: '' })), { currency: 'EUR', status: null });
    assert.deepEqual(record(map({ cur: 'USD' })), { currency: 'USD' });
  });

  it('null passes through a rule untouched (the validator decides)', () => {
    const map = mapper({ signup_date: { from: 'd', datetime: {} }, customer_id: 'id' }, { passthrough: false });
    assert.deepEqual(record(map({ d: null, id: null })), { signup_date: null, customer_id: null });
  });
});

describe('field mapping: datetime', () => {
  it('iso (default) → UTC …Z', () => {
    assert.equal(datetime('2026-05-01T12:00:00Z'), '2026-05-01T12:00:00Z');
    assert.equal(datetime('2026-05-01T12:00:00+02:00'), '2026-05-01T10:00:00Z');
    assert.equal(datetime('2026-05-01T12:00:00.123-05:30'), '2026-05-01T17:30:00.123Z');
    assert.equal(datetime('20260501T120000Z'), '2026-05-01T12:00:00Z');
    assert.equal(datetime('2026-05-01'), '2026-05-01T00:00:00Z');
  });

  it('a local ISO time is read in the rule zone; a written offset wins', () => {
    assert.equal(datetime('2026-01-15T10:00:00', 'iso', 'Europe/Malta'), '2026-01-15T09:00:00Z');
    assert.equal(datetime('2026-07-15T10:00:00', 'iso', 'Europe/Malta'), '2026-07-15T08:00:00Z');
    assert.equal(datetime('2026-07-15T10:00:00Z', 'iso', 'Europe/Malta'), '2026-07-15T10:00:00Z');
  });

  it('keeps sub-millisecond digits as written and never rounds up', () => {
    assert.equal(datetime('2026-05-01T12:00:00.123456Z'), '2026-05-01T12:00:00.123456Z');
    assert.equal(datetime('2026-05-01T12:00:00.999999999Z'), '2026-05-01T12:00:00.999999999Z');
    assert.equal(datetime('2026-12-31T23:59:59.9999999+01:00'), '2026-12-31T22:59:59.9999999Z');
    assert.equal(datetime('2026-12-31T23:59:59.9999999', 'iso', 'Europe/Malta'), '2026-12-31T22:59:59.9999999Z');
    assert.equal(datetime('2026-05-01T12:00:00,57Z'), '2026-05-01T12:00:00.57Z');
    assert.equal(datetime('2026-05-01 12:00:00.123456', 'sql'), '2026-05-01T12:00:00.123456Z');
    assert.equal(datetime('2026-12-31 23:59:59.9999996', 'sql', 'America/New_York'), '2027-01-01T04:59:59.9999996Z');
  });

  it('sql, rfc2822, http', () => {
    assert.equal(datetime('2026-05-01 12:00:00', 'sql'), '2026-05-01T12:00:00Z');
    assert.equal(datetime('2026-05-01 12:00:00', 'sql', 'Asia/Tokyo'), '2026-05-01T03:00:00Z');
    assert.equal(datetime('Fri, 01 May 2026 12:00:00 +0200', 'rfc2822'), '2026-05-01T10:00:00Z');
    assert.equal(datetime('Fri, 01 May 2026 12:00:00 GMT', 'http'), '2026-05-01T12:00:00Z');
  });

  it('unix seconds and milliseconds, exactly', () => {
    assert.equal(datetime(1777636800, 'unix_seconds'), '2026-05-01T12:00:00Z');
    assert.equal(datetime('1777636800.999999', 'unix_seconds'), '2026-05-01T12:00:00.999999Z');
    assert.equal(datetime(1777636800.5, 'unix_seconds'), '2026-05-01T12:00:00.5Z');
    assert.equal(datetime(1777636800123, 'unix_millis'), '2026-05-01T12:00:00.123Z');
    assert.equal(datetime('1777636800999.9999', 'unix_millis'), '2026-05-01T12:00:00.9999999Z');
    assert.equal(datetime(-1.5, 'unix_seconds'), '1969-12-31T23:59:58.5Z');
  });

  it('a luxon format in a zone', () => {
    assert.equal(datetime('01/05/2026 14:30', 'dd/MM/yyyy HH:mm', 'Europe/Malta'), '2026-05-01T12:30:00Z');
    assert.equal(datetime('01/05/2026 14:30:05.250', 'dd/MM/yyyy HH:mm:ss.SSS'), '2026-05-01T14:30:05.25Z');
    assert.equal(datetime(20260501, 'yyyyMMdd'), '2026-05-01T00:00:00Z');
  });

  it('date fields: YYYY-MM-DD, the day as written', () => {
    assert.equal(datetime('2026-05-01', undefined, undefined, 'date'), '2026-05-01');
    assert.equal(datetime('01/05/2026', 'dd/MM/yyyy', 'Europe/Malta', 'date'), '2026-05-01');
    assert.equal(datetime('2026-05-01T23:30:00-02:00', 'iso', undefined, 'date'), '2026-05-01');
    assert.equal(datetime(1777593600, 'unix_seconds', undefined, 'date'), '2026-05-01');
    assert.equal(datetime(1777593600, 'unix_seconds', 'America/New_York', 'date'), '2026-04-30');
  });

  it('what cannot be parsed is a mapping error naming field, value, format and zone', () => {
    const map = mapper({ signup_date: { from: 'd', datetime: { format: 'dd/MM/yyyy', zone: 'Europe/Malta' } } }, { passthrough: false });
    assert.deepEqual(map({ d: '31/13/2026' }), {
      error: { field: 'signup_date', rule: 'mapping', message: 'signup_date: cannot parse "31/13/2026" with format dd/MM/yyyy in Europe/Malta' },
    });
    assert.equal(datetime('2026-02-30T00:00:00Z'), 'signup_date: cannot parse "2026-02-30T00:00:00Z" with format iso in UTC');
    assert.equal(datetime('yesterday'), 'signup_date: cannot parse "yesterday" with format iso in UTC');
    assert.equal(datetime({ at: 1 }), 'signup_date: cannot parse {"at":1} with format iso in UTC');
    assert.equal(datetime('soon', 'unix_seconds'), 'signup_date: cannot parse "soon" with format unix_seconds in UTC');
    assert.equal(datetime(1e300, 'unix_seconds'), 'signup_date: cannot parse 1e+300 with format unix_seconds in UTC');
  });
});

describe('field mapping: affiliates', () => {
  const affiliates: PartnerDefinition['affiliates'] = { map: { 'AFF-1': 'affiliate-1', '77': 'affiliate-77' }, unmapped: 'keep' };

  it('maps partner codes to the service ids, also after a rename and for numeric codes', () => {
    assert.deepEqual(record(mapper({}, { affiliates })({ affiliate_id: 'AFF-1' })), { affiliate_id: 'affiliate-1' });
    assert.deepEqual(record(mapper({ affiliate_id: 'aff' }, { affiliates })({ aff: 77 })), { affiliate_id: 'affiliate-77' });
  });

  it('unmapped: keep passes the code; reject is an affiliate error', () => {
    assert.deepEqual(record(mapper({}, { affiliates })({ affiliate_id: 'AFF-2' })), { affiliate_id: 'AFF-2' });
    assert.deepEqual(mapper({}, { affiliates: { ...affiliates, unmapped: 'reject' } })({ affiliate_id: 'AFF-2' }), {
      error: { field: 'affiliate_id', rule: 'affiliate', message: 'affiliate_id: partner affiliate code "AFF-2" is not in affiliates.map (unmapped: reject)' },
    });
  });

  it('a missing affiliate_id is left to validation; a prototype name is not a mapped code', () => {
    const reject = mapper({}, { affiliates: { ...affiliates, unmapped: 'reject' } });
    assert.deepEqual(record(reject({ customer_id: 'c' })), { customer_id: 'c' });
    assert.equal('error' in reject({ affiliate_id: 'toString' }), true);
  });
});

describe('field mapping: bad partner data never throws', () => {
  const map = mapper(
    {
      customer_id: 'a.b.c',
      signup_date: { from: 'd', datetime: { format: 'unix_millis' } },
      kyc_status_id: { from: 'k', map: { x: 'approved' } },
    },
    { affiliates: { map: {}, unmapped: 'reject' } },
  );
  const inputs: unknown[] = [null, undefined, 42, 'text', [], [1, 2], true, { a: null }, { a: { b: 5 } }, { d: [] }, { d: {} }, { d: 'NaN' }, { d: Infinity }, { k: { nested: 1 } }, { affiliate_id: {} }, Object.create(null) as unknown];
  for (const input of inputs) {
    it(`input ${JSON.stringify(input) ?? String(input)}`, () => {
      const result = map(input);
      assert.ok('record' in result || 'error' in result);
      if ('error' in result) assert.equal(result.error.rule, 'mapping');
    });
  }

  it('a record that is not an object is one mapping error', () => {
    assert.deepEqual(map([1]), { error: { field: '(record)', rule: 'mapping', message: 'the source record is an array, not a JSON object' } });
  });
});
