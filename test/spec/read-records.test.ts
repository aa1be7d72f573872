import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { openRecordFile, RecordFileError } from '../../connectors/file/read-records.js';
import type { FileRecord, RecordFile } from '../../connectors/file/read-records.js';
import { jsonIssuesOf } from '../../src/kernel/strict-json.js';
import { tempDir } from './fixtures.js';

async function all(file: RecordFile): Promise<FileRecord[]> {
  const records: FileRecord[] = [];
  for await (const record of file.records) records.push(record);
  return records;
}

const noStdin = (): Readable => Readable.from([]);

describe('file reader: openRecordFile', () => {
  const dir = tempDir();
  after(() => dir.remove());

  it('reads NDJSON: blank lines skipped and not counted, a bad line reported and the rest read', async () => {
    const path = dir.write('mixed.ndjson', '{"a":1}\n\n   \n{"a":2}\r\nnot json\n{"a":3}\n[4]\n"five"');
    const file = await openRecordFile(path, noStdin());
    assert.equal(file.name, path);
    assert.equal(file.format, 'ndjson');
    const records = await all(file);
    assert.deepEqual(
      records.map((r) => [r.position, r.value]),
      [
        [1, { a: 1 }],
        [2, { a: 2 }],
        [3, 'not json'],
        [4, { a: 3 }],
        [5, [4]],
        [6, 'five'],
      ],
    );
    assert.match(records[2]?.parseError ?? '', /Unexpected token/);
    assert.equal(records.filter((r) => r.parseError !== undefined).length, 1);
  });

  it('a parse error does not quote the line (it may hold personal data)', async () => {
    const path = dir.write('pii.ndjson', '{"email": "zebulon@example.com" "first_name": "Zebulon"}\nzebulon@example.com\n{"first_name": zebulon, "last_name": "Zebulonsson"}\nzz\n');
    const records = await all(await openRecordFile(path, noStdin()));
    assert.equal(records.length, 4);
    for (const record of records) {
      assert.ok(record.parseError, 'parse error expected');
      assert.ok(!record.parseError.includes('ebulon') && !record.parseError.includes('"zz"'), record.parseError);
    }
  });

  it('reads a JSON array, positions 1-based', async () => {
    const path = dir.write('bulk.json', '\n  [ {"a": 1}, {"a": 2},\n {"a": 3} ]\n');
    const file = await openRecordFile(path, noStdin());
    assert.equal(file.format, 'json-array');
    assert.deepEqual(await all(file), [
      { position: 1, value: { a: 1 } },
      { position: 2, value: { a: 2 } },
      { position: 3, value: { a: 3 } },
    ]);
  });

  it('an unparseable JSON array is a RecordFileError naming the file and the parse error', async () => {
    const path = dir.write('broken.json', '[{"a": 1}, {"a": 2]');
    await assert.rejects(openRecordFile(path, noStdin()), (error: Error) => {
      assert.ok(error instanceof RecordFileError);
      assert.match(error.message, new RegExp(`^cannot parse ${escape(path)} as a JSON array: .*position`));
      return true;
    });
  });

  it('tolerates a UTF-8 BOM before NDJSON and before an array', async () => {
    const ndjson = dir.write('bom.ndjson', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":"ä"}\n{"a":2}\n')]));
    assert.deepEqual(await all(await openRecordFile(ndjson, noStdin())), [
      { position: 1, value: { a: 'ä' } },
      { position: 2, value: { a: 2 } },
    ]);
    const array = dir.write('bom.json', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('[{"a":1}]')]));
    const file = await openRecordFile(array, noStdin());
    assert.equal(file.format, 'json-array');
    assert.deepEqual(await all(file), [{ position: 1, value: { a: 1 } }]);
  });

  it('reads stdin for "-", with multi-byte characters and the BOM split across chunks', async () => {
    const bytes = Buffer.from('\uFEFF{"name":"Zoë €"}\n\n{"name":"😀"}\n');
    const chunks = [bytes.subarray(0, 1), bytes.subarray(1, 2), bytes.subarray(2, 16), bytes.subarray(16, 17), bytes.subarray(17)];
    const file = await openRecordFile('-', Readable.from(chunks));
    assert.equal(file.name, 'stdin');
    assert.equal(file.format, 'ndjson');
    assert.deepEqual(await all(file), [
      { position: 1, value: { name: 'Zoë €' } },
      { position: 2, value: { name: '😀' } },
    ]);
  });

  it('reads a JSON array from stdin', async () => {
    const file = await openRecordFile('-', Readable.from(['  ', '\n[1,', ' 2]']));
    assert.equal(file.format, 'json-array');
    assert.deepEqual((await all(file)).map((r) => r.value), [1, 2]);
  });

  it('an empty file is NDJSON without records', async () => {
    const file = await openRecordFile(dir.write('empty.ndjson', '\n \n'), noStdin());
    assert.equal(file.format, 'ndjson');
    assert.deepEqual(await all(file), []);
  });

  it('a missing file is a RecordFileError: cannot read FILE: reason', async () => {
    const path = join(dir.path, 'missing.ndjson');
    await assert.rejects(openRecordFile(path, noStdin()), (error: Error) => {
      assert.ok(error instanceof RecordFileError);
      assert.equal(error.message, `cannot read ${path}: no such file`);
      return true;
    });
  });

  it('a folder is a RecordFileError too', async () => {
    await assert.rejects(openRecordFile(dir.path, noStdin()), { name: 'RecordFileError', message: `cannot read ${dir.path}: is a directory` });
  });

  it('a read error in the middle of NDJSON ends the records with a RecordFileError', async () => {
    let sent = 0;
    const failing = new Readable({
      read() {
        if (sent++ < 2) this.push('{"a":1}\n');
        else this.destroy(new Error('device gone'));
      },
    });
    const file = await openRecordFile('-', failing);
    await assert.rejects(all(file), { name: 'RecordFileError', message: 'cannot read stdin: device gone' });
  });

  it('streams: 200,000 NDJSON lines, read one at a time', async () => {
    const lines = 200_000;
    const stream = Readable.from(
      (function* () {
        for (let i = 1; i <= lines; i++) yield `{"customer_id":"c-${i}","n":${i}}\n`;
      })(),
    );
    const file = await openRecordFile('-', stream);
    let count = 0;
    let last: FileRecord | undefined;
    for await (const record of file.records) {
      count++;
      last = record;
    }
    assert.equal(count, lines);
    assert.deepEqual(last, { position: lines, value: { customer_id: `c-${lines}`, n: lines } });
  });

  it('stopping early releases the input', async () => {
    const source = Readable.from(['{"a":1}\n{"a":2}\n', '{"a":3}\n']);
    const file = await openRecordFile('-', source);
    for await (const record of file.records) {
      assert.equal(record.position, 1);
      break;
    }
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(source.destroyed, true);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('file reader: what the text hides', () => {
  const dir = tempDir();
  after(() => dir.remove());
  const rules = (value: unknown) => (jsonIssuesOf(value) ?? []).map((i) => `${i.rule} ${i.path.join('.')}`);

  it('reads bytes that are not UTF-8 as distinct characters and marks the strings holding them, in NDJSON and in an array', async () => {
    const line = (byte: number) => Buffer.concat([Buffer.from('{"customer_id":"id-'), Buffer.from([byte]), Buffer.from('","n":1}')]);
    const ndjson = dir.write('bytes.ndjson', Buffer.concat([Buffer.from('{"customer_id":"ok"}\n'), line(0xff), Buffer.from('\n'), line(0xfe), Buffer.from('\n')]));
    const records = await all(await openRecordFile(ndjson, noStdin()));
    assert.deepEqual(records.map((r) => [r.position, r.value, rules(r.value)]), [
      [1, { customer_id: 'ok' }, []],
      [2, { customer_id: 'id-\udcff', n: 1 }, ['encoding customer_id']],
      [3, { customer_id: 'id-\udcfe', n: 1 }, ['encoding customer_id']],
    ]);
    const array = dir.write('bytes.json', Buffer.concat([Buffer.from('[{"customer_id":"ok"},'), line(0xff), Buffer.from(',{"a":1,"a":2}]')]));
    const file = await openRecordFile(array, noStdin());
    assert.deepEqual((await all(file)).map((r) => [r.position, rules(r.value)]), [[1, []], [2, ['encoding customer_id']], [3, ['duplicate_key a']]]);
  });

  it('a line with bytes that are not UTF-8 outside its strings is not JSON, and says so', async () => {
    const path = dir.write('outside.ndjson', Buffer.concat([Buffer.from('{"a":1,'), Buffer.from([0xff]), Buffer.from('}\n')]));
    const [record] = await all(await openRecordFile(path, noStdin()));
    assert.match(record?.parseError ?? '', /\(the line is not valid UTF-8\)$/);
  });
});
