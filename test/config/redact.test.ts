import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createRedactor } from '../../src/config/redact.js';
import { createLogger } from '../../src/log.js';

const SECRET = 'p@ss "word"/+1 ü';

describe('redaction', () => {
  const redact = createRedactor([SECRET, 'plain-secret-123']);

  it('replaces every occurrence of a secret', () => {
    assert.equal(redact('a plain-secret-123 b plain-secret-123'), 'a *** b ***');
    assert.equal(redact(`x ${SECRET} y`), 'x *** y');
  });

  it('replaces the JSON-escaped form (once and twice)', () => {
    const once = JSON.stringify({ secret: SECRET });
    assert.ok(!once.includes(SECRET));
    assert.equal(redact(once), '{"secret":"***"}');
    const twice = JSON.stringify({ line: once });
    assert.equal(redact(twice), JSON.stringify({ line: '{"secret":"***"}' }));
  });

  it('replaces the URL- and form-encoded forms', () => {
    assert.equal(redact(`https://x.example/?client_id=a&s=${encodeURIComponent(SECRET)}`), 'https://x.example/?client_id=a&s=***');
    assert.equal(redact(`s=${new URLSearchParams({ s: SECRET }).toString().slice(2)}`), 's=***');
    assert.equal(redact(`s=${encodeURIComponent(SECRET).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase())}`), 's=***');
  });

  it('replaces Authorization header values and tokens it was never told about', () => {
    const none = createRedactor([]);
    assert.equal(none('Authorization: Bearer eyJhbGciOi.abc-def_ghi'), 'Authorization: Bearer ***');
    assert.equal(none('{"headers":{"authorization":"Bearer abc.def"}}'), '{"headers":{"authorization":"Bearer ***"}}');
    assert.equal(none(JSON.stringify({ msg: JSON.stringify({ Authorization: 'Bearer tok123' }) })), JSON.stringify({ msg: JSON.stringify({ Authorization: 'Bearer ***' }) }));
    assert.equal(none("headers: { authorization: 'Basic dXNlcjpwYXNz' }"), "headers: { authorization: 'Basic ***' }");
    assert.equal(none('{"access_token":"eyJ0eXAi.x.y","token_type":"Bearer","expires_in":3600}'), '{"access_token":"***","token_type":"Bearer","expires_in":3600}');
    assert.equal(none('GET /x?access_token=abc123&page=2'), 'GET /x?access_token=***&page=2');
    assert.equal(none('grant_type=client_credentials&client_id=c&client_secret=shh'), 'grant_type=client_credentials&client_id=c&client_secret=***');
  });

  it('ignores secrets shorter than 4 characters and leaves other text alone', () => {
    const short = createRedactor(['abc', '', 'x']);
    const text = 'abc is the alphabet; x marks the spot';
    assert.equal(short(text), text);
    assert.equal(redact('nothing to see here'), 'nothing to see here');
  });

  it('a secret that contains another is replaced whole', () => {
    const nested = createRedactor(['abcd', 'xxabcdxx']);
    assert.equal(nested('xxabcdxx and abcd'), '*** and ***');
  });

  it('treats regular-expression characters in secrets literally', () => {
    const special = createRedactor(['a.b*c', '(x|y)+']);
    assert.equal(special('a.b*c axbbc (x|y)+ x'), '*** axbbc *** x');
  });

  it('is fast on lines without secrets', () => {
    const many = createRedactor(Array.from({ length: 50 }, (_, i) => `secret-number-${i}-${'z'.repeat(20)}`));
    const line = JSON.stringify({ level: 'info', message: 'page 12 loaded', partner: 'acme', stream: 'customers', records: 500 });
    const started = process.hrtime.bigint();
    for (let i = 0; i < 100_000; i++) many(line);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    assert.ok(ms < 2000, `100k lines took ${ms} ms`);
  });

  it('the logger redacts with it: messages, metadata and error causes', () => {
    let out = '';
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        out += chunk.toString();
        done();
      },
    });
    const logger = createLogger({ json: true, stream, redact: createRedactor([SECRET]) });
    logger.error(`token request failed for ${SECRET}`, { body: { client_secret: SECRET }, error: new Error(`bad ${SECRET}`) });
    assert.ok(out.length > 0);
    assert.ok(!out.includes(SECRET) && !out.includes(JSON.stringify(SECRET).slice(1, -1)), out);
    assert.match(out, /token request failed for \*\*\*/);
  });

  it('the logger writes a line with nothing to redact as it was given, error and date metadata as before', () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString().trim());
        done();
      },
    });
    const json = createLogger({ json: true, stream, redact: createRedactor([SECRET]) });
    json.info('page 12 loaded', { partner: 'acme', records: 500, nested: { list: [1, 'two', null] }, skipped: undefined });
    const { timestamp, ...first } = JSON.parse(lines[0]!) as Record<string, unknown>;
    assert.equal(typeof timestamp, 'string');
    assert.deepEqual(first, { level: 'info', message: 'page 12 loaded', partner: 'acme', records: 500, nested: { list: [1, 'two', null] } });
    json.warn('retrying', { error: new Error('socket hang up'), at: new Date(Date.UTC(2026, 10, 29)) });
    const warned = JSON.parse(lines[1]!) as Record<string, unknown>;
    assert.deepEqual(warned.error, { message: 'socket hang up', name: 'Error' });
    assert.equal(warned.at, '2026-11-29T00:00:00.000Z');
    const text = createLogger({ json: false, stream, redact: createRedactor([SECRET]) });
    text.info('window done', { partner: 'acme', until: new Date(Date.UTC(2026, 10, 29)), rows: 3 });
    assert.match(lines[2]!, /acme: window done {2}\(until=2026-11-29T00:00:00.000Z, rows=3\)$/);
  });
});
