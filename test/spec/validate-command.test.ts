import assert from 'node:assert/strict';
import { join } from 'node:path';
import { validateCommand } from '../../src/cli/commands/validate.js';
import { createSpecValidator } from '../../src/spec/validator.js';
import { FULL, captureIo, tempDir } from './fixtures.js';

const validator = createSpecValidator();
const ndjson = (values: unknown[]): string => values.map((v) => JSON.stringify(v)).join('\n') + '\n';
const SCHEMA = 'schema src/spec/schemas/igaming/transactions.schema.json';

describe('validate command', () => {
  const dir = tempDir();
  after(() => dir.remove());
  const tx = FULL.igaming.transactions;

  it('all valid: exit 0 and a one-line OK summary naming variant, entity and schema', async () => {
    const file = dir.write('ok.ndjson', ndjson([tx, { ...tx, transaction_id: 'tx-2' }]));
    const io = captureIo();
    assert.equal(await validateCommand({ variant: 'igaming', entity: 'transactions', file, json: false }, io, validator), 0);
    assert.deepEqual(io.stdout, [`OK: 2 records, all valid (igaming/transactions, ${SCHEMA})`]);
    assert.deepEqual(io.stderr, []);
  });

  it('some invalid: exit 1, an aligned table LINE FIELD RULE MESSAGE and a summary', async () => {
    const file = dir.write('bad.ndjson', ndjson([tx, { ...tx, amount_currency: 10.123 }]) + '\n{oops\n' + ndjson([{ ...tx, transaction_type: 'payment', foo: 1 }]));
    const io = captureIo();
    assert.equal(await validateCommand({ variant: 'igaming', entity: 'transactions', file, json: false }, io, validator), 1);
    const lines = (io.stdout.join('\n')).split('\n');
    assert.match(lines[0] ?? '', /^LINE +FIELD +RULE +MESSAGE$/);
    const messageColumn = (lines[0] ?? '').indexOf('MESSAGE');
    const rows = lines.slice(1, -1);
    assert.equal(rows.length, 4);
    assert.match(rows[0] ?? '', /^2 +amount_currency +maxDecimalPlaces +amount_currency: more than 2 decimal places \(10\.123\)$/);
    assert.match(rows[1] ?? '', /^3 +\(record\) +json +record is not valid JSON: /);
    assert.match(rows[2] ?? '', /^4 +foo +additionalProperties +foo: unknown property \(allowed: transaction_id, /);
    assert.match(rows[3] ?? '', /^4 +transaction_type +enum +transaction_type: must be one of deposit, withdrawal, bonus, adjustment, other \(got "payment"\)$/);
    // aligned: every column of every row starts where its header does
    const header = lines[0] ?? '';
    for (const column of ['FIELD', 'RULE', 'MESSAGE'].map((h) => header.indexOf(h))) {
      for (const row of rows) assert.ok(row[column - 1] === ' ' && row[column] !== ' ', `column at ${column} in ${JSON.stringify(row)}`);
    }
    for (const row of rows) assert.match(row.slice(messageColumn), /^(record|[a-z_]+:) /);
    assert.equal(lines.at(-1), `4 records: 1 valid, 3 invalid (igaming/transactions, ${SCHEMA})`);
  });

  it('--json prints exactly total, valid, invalid and every error with its line', async () => {
    const file = dir.write('json.ndjson', ndjson([tx, { ...tx, currency: 'eur', status: null }]) + 'nope\n');
    const io = captureIo();
    assert.equal(await validateCommand({ variant: 'igaming', entity: 'transactions', file, json: true }, io, validator), 1);
    assert.equal(io.stdout.length, 1);
    const report = JSON.parse(io.stdout[0] ?? '') as Record<string, unknown>;
    assert.deepEqual(Object.keys(report), ['total', 'valid', 'invalid', 'errors']);
    assert.deepEqual(report, {
      total: 3,
      valid: 1,
      invalid: 2,
      errors: [
        { line: 2, field: 'currency', rule: 'pattern', message: 'currency: must be an ISO 4217 three-letter upper-case currency code, e.g. EUR (got "eur")' },
        { line: 2, field: 'status', rule: 'required', message: 'status: must not be null (required field)' },
        { line: 3, field: '(record)', rule: 'json', message: "record is not valid JSON: Unexpected token 'o'" },
      ],
    });
  });

  it('--json with every record valid: exit 0 and no errors', async () => {
    const file = dir.write('ok2.ndjson', ndjson([tx]));
    const io = captureIo();
    assert.equal(await validateCommand({ variant: 'igaming', entity: 'transactions', file, json: true }, io, validator), 0);
    assert.deepEqual(JSON.parse(io.stdout[0] ?? ''), { total: 1, valid: 1, invalid: 0, errors: [] });
  });

  it('a JSON array of 1000 records is a valid bulk payload', async () => {
    const file = dir.write('bulk-1000.json', JSON.stringify(new Array(1000).fill(FULL.igaming.activity)));
    const io = captureIo();
    assert.equal(await validateCommand({ variant: 'igaming', entity: 'activity', file, json: true }, io, validator), 0);
    assert.deepEqual(JSON.parse(io.stdout[0] ?? ''), { total: 1000, valid: 1000, invalid: 0, errors: [] });
  });

  it('a JSON array of 1001 records breaks the bulk limit: reported on line 0, exit 1', async () => {
    const file = dir.write('bulk-1001.json', JSON.stringify(new Array(1001).fill(FULL.igaming.activity)));
    const io = captureIo();
    assert.equal(await validateCommand({ variant: 'igaming', entity: 'activity', file, json: true }, io, validator), 1);
    assert.deepEqual(JSON.parse(io.stdout[0] ?? ''), {
      total: 1001,
      valid: 1001,
      invalid: 0,
      errors: [{ line: 0, field: '(payload)', rule: 'maxItems', message: 'bulk payload has 1001 records; at most 1000 are allowed (spec §8)' }],
    });
    const text = captureIo();
    assert.equal(await validateCommand({ variant: 'igaming', entity: 'activity', file, json: false }, text, validator), 1);
    assert.match(text.stdout.join('\n'), /^0 +\(payload\) +maxItems +bulk payload has 1001 records/m);
    assert.match(text.stdout.join('\n'), /1001 records: 1001 valid, 0 invalid; the payload as a whole is rejected \(igaming\/activity, /);
  });

  it('NDJSON has no bulk limit: it is not one payload', async () => {
    const file = dir.write('many.ndjson', ndjson(new Array(1001).fill(FULL.igaming.activity)));
    const io = captureIo();
    assert.equal(await validateCommand({ variant: 'igaming', entity: 'activity', file, json: true }, io, validator), 0);
  });

  it('reads stdin when the file is "-"', async () => {
    const io = captureIo(ndjson([FULL['prop-trading'].activity, { ...FULL['prop-trading'].activity, lots_traded: -1 }]));
    assert.equal(await validateCommand({ variant: 'prop-trading', entity: 'activity', file: '-', json: true }, io, validator), 1);
    assert.deepEqual(JSON.parse(io.stdout[0] ?? ''), {
      total: 2,
      valid: 1,
      invalid: 1,
      errors: [{ line: 2, field: 'lots_traded', rule: 'minimum', message: 'lots_traded: must be >= 0 (got -1)' }],
    });
  });

  it('a bad variant: exit 2, naming it and the allowed ones', async () => {
    const io = captureIo();
    assert.equal(await validateCommand({ variant: 'casino', entity: 'customers', file: 'x', json: false }, io, validator), 2);
    assert.deepEqual(io.stdout, []);
    assert.deepEqual(io.stderr, ['partner-sync: unknown variant "casino" (allowed: igaming, prop-trading)']);
  });

  it('a bad entity: exit 2, naming it and the allowed ones', async () => {
    const io = captureIo();
    assert.equal(await validateCommand({ variant: 'igaming', entity: 'players', file: 'x', json: true }, io, validator), 2);
    assert.deepEqual(io.stderr, ['partner-sync: unknown entity "players" (allowed: customers, transactions, activity)']);
  });

  it('a missing file: exit 2, naming the file', async () => {
    const file = join(dir.path, 'nope.ndjson');
    const io = captureIo();
    assert.equal(await validateCommand({ variant: 'igaming', entity: 'customers', file, json: false }, io, validator), 2);
    assert.deepEqual(io.stderr, [`partner-sync: cannot read ${file}: no such file`]);
    assert.deepEqual(io.stdout, []);
  });

  it('an unparseable JSON array: exit 2, naming the file and the parse error', async () => {
    const file = dir.write('broken.json', '[{"customer_id": "c1"},');
    const io = captureIo();
    assert.equal(await validateCommand({ variant: 'igaming', entity: 'customers', file, json: true }, io, validator), 2);
    assert.equal(io.stderr.length, 1);
    assert.ok(io.stderr[0]?.startsWith(`partner-sync: cannot parse ${file} as a JSON array: `), io.stderr[0]);
  });

  it('uses the shared validator when none is passed', async () => {
    const io = captureIo(ndjson([FULL.igaming.customers]));
    assert.equal(await validateCommand({ variant: 'igaming', entity: 'customers', file: '-', json: false }, io), 0);
    assert.match(io.stdout[0] ?? '', /^OK: 1 record, all valid \(igaming\/customers, schema src\/spec\/schemas\/igaming\/customers\.schema\.json\)$/);
  });
});
