/**
 * The partner JSON parser: the values of JSON.parse, and what JSON.parse hides (duplicate keys,
 * numbers a double cannot keep, bytes that are not UTF-8), with the issue's path, carried by the
 * parsed objects; and the fast path, which must find every issue the strict parse finds.
 */
import assert from 'node:assert/strict';
import { jsonIssuesOf, parsePartnerJson, parseStrictJson, type JsonIssue } from '../../src/kernel/strict-json.js';
import { decodeUtf8 } from '../../src/kernel/utf8.js';

const brief = (issues: readonly JsonIssue[] | undefined) => (issues ?? []).map((i) => [i.rule, i.path.join('.'), ...(i.written === undefined ? [] : [i.written])]);

describe('parseStrictJson', () => {
  it('builds the values JSON.parse builds', () => {
    const texts = [
      '{"a":1,"b":[true,false,null],"c":{"d":"x\\"y\\\\z\\u00e9\\n"},"e":-0.5e-3,"f":""}',
      ' [ 1 , 2.50 , "three" , {} , [] ] ',
      '"\\ud83d\\ude00 \\/"',
      '12345',
      '{"__proto__":{"polluted":1},"constructor":2}',
    ];
    for (const text of texts) {
      const { value, issues } = parseStrictJson(text);
      assert.deepEqual(value, JSON.parse(text), text);
      assert.deepEqual(issues, [], text);
    }
    const proto = parseStrictJson('{"__proto__":{"polluted":1}}').value as Record<string, unknown>;
    assert.deepEqual(Object.keys(proto), ['__proto__']);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('throws a SyntaxError for malformed JSON, saying where', () => {
    for (const text of ['', '{', '{"a":1,}', '[1 2]', '{"a" 1}', 'nul', '"abc', '"a\u0001"', '01x', '{"a":1} x', '"\\x"', '-', '1.', '1e']) {
      assert.throws(() => parseStrictJson(text), (error: Error) => error instanceof SyntaxError && /at position \d+/.test(error.message), JSON.stringify(text));
      assert.throws(() => JSON.parse(text), SyntaxError, `JSON.parse accepts ${JSON.stringify(text)} too`);
    }
  });

  it('reports a key given twice, with its path, and keeps the last value as JSON.parse does', () => {
    const { value, issues } = parseStrictJson('[{"id":"t1","amount_currency":10,"amount_currency":99999},{"id":"t2","meta":{"x":1,"x":2}}]');
    assert.deepEqual(value, [{ id: 't1', amount_currency: 99999 }, { id: 't2', meta: { x: 2 } }]);
    assert.deepEqual(brief(issues), [['duplicate_key', '0.amount_currency'], ['duplicate_key', '1.meta.x']]);
    assert.match(issues[0]?.message ?? '', /"amount_currency" is given more than once/);
  });

  it('reports a number whose written value its double does not keep, and only such a number', () => {
    const { issues } = parseStrictJson('{"a":1.0000000000000001,"b":12345678901234567,"c":0.1000000000000000055511151231257827,"d":1e400,"e":-9007199254740993}');
    assert.deepEqual(brief(issues), [
      ['exact_number', 'a', '1.0000000000000001'],
      ['exact_number', 'b', '12345678901234567'],
      ['exact_number', 'c', '0.1000000000000000055511151231257827'],
      ['exact_number', 'd', '1e400'],
      ['exact_number', 'e', '-9007199254740993'],
    ]);
    // Long texts of exact values: trailing zeros, leading zeros, exponents, 2^53.
    const exact = parseStrictJson('[1.50000000000000000000,0.000000000000000000012,1.5e3,1E-7,9007199254740992,123456789012345,-0.0]');
    assert.deepEqual(exact.issues, []);
  });

  it('reports a string holding undecodable bytes, given their offsets', () => {
    const { text, undecodable } = decodeUtf8(Buffer.from([...Buffer.from('{"customer_id":"id-'), 0xff, ...Buffer.from('","email":"a@b.de","n":{"k":"x'), 0xc3, ...Buffer.from('"}}')]));
    const { value, issues } = parseStrictJson(text, { undecodable });
    assert.deepEqual(value, { customer_id: 'id-\udcff', email: 'a@b.de', n: { k: 'x\udcc3' } });
    assert.deepEqual(brief(issues), [['encoding', 'customer_id'], ['encoding', 'n.k']]);
    // A real U+FFFD sent as UTF-8 is no issue.
    assert.deepEqual(parseStrictJson('{"a":"\uFFFD"}', { undecodable: [] }).issues, []);
  });
});

describe('jsonIssuesOf', () => {
  it('gives each object and array on an issue path the issues below it, paths relative to it', () => {
    const { value } = parseStrictJson('{"data":[{"id":1},{"id":2,"amount":1,"amount":2}],"meta":{"next":"a","next":"b"}}');
    const body = value as { data: unknown[]; meta: unknown };
    assert.deepEqual(brief(jsonIssuesOf(body)), [['duplicate_key', 'data.1.amount'], ['duplicate_key', 'meta.next']]);
    assert.deepEqual(brief(jsonIssuesOf(body.data)), [['duplicate_key', '1.amount']]);
    assert.deepEqual(brief(jsonIssuesOf(body.data[1])), [['duplicate_key', 'amount']]);
    assert.equal(jsonIssuesOf(body.data[0]), undefined);
    assert.deepEqual(brief(jsonIssuesOf(body.meta)), [['duplicate_key', 'next']]);
    // Hidden: the value is still the plain object JSON.parse makes.
    assert.deepEqual(Object.keys(body.data[1] as object), ['id', 'amount']);
    assert.equal(JSON.stringify(body.data[1]), '{"id":2,"amount":2}');
  });
});

describe('parsePartnerJson', () => {
  it('finds what the strict parse finds, and nothing where there is nothing', () => {
    const texts = [
      '{"a":1,"a":2}',
      '[{"a":{"b":1,"b":1}}]',
      '{"a":"x:y","a":"z"}',
      '{"s":"\\":\\"","s":1}',
      '{"s":"\\\\","t":1,"t":2}',
      '{"n":1.0000000000000001}',
      '[12345678901234567]',
      '1.0000000000000001',
      '{"n":1e400}',
      '{"n":1.5e3}',
      '{"a":"12345678901234567890","b":"1e5","c":"x:y:z"}',
      '{"a":1,"b":{"c":[1,2,{"d":null}]},"e":"2026-11-02T12:00:00Z"}',
      '[]',
      '"text"',
    ];
    for (const text of texts) {
      const fast = parsePartnerJson(text);
      const strict = parseStrictJson(text);
      assert.deepEqual(fast.value, strict.value, text);
      assert.deepEqual(brief(fast.issues), brief(strict.issues), text);
      assert.deepEqual(brief(jsonIssuesOf(fast.value)), brief(jsonIssuesOf(strict.value)), text);
    }
    assert.deepEqual(brief(parsePartnerJson('{"a":1,"a":2}').issues), [['duplicate_key', 'a']]);
  });

  it('throws JSON.parse\'s SyntaxError for malformed JSON', () => {
    assert.throws(() => parsePartnerJson('{"a":'), SyntaxError);
  });
});

describe('decodeUtf8', () => {
  it('decodes valid UTF-8 as Node does, with no offsets', () => {
    const bytes = Buffer.from('Zoë € 😀 \uFFFD');
    assert.deepEqual(decodeUtf8(bytes), { text: 'Zoë € 😀 \uFFFD' });
  });

  it('turns each byte that is no character into U+DC00 + byte (distinct, as sent), and gives their offsets', () => {
    const cases: [number[], string][] = [
      [[0x61, 0xff, 0x62], 'a\udcffb'],
      [[0x61, 0xfe, 0xff], 'a\udcfe\udcff'],
      [[0xc3], '\udcc3'],
      [[0xe2, 0x82], '\udce2\udc82'],
      [[0xe2, 0x82, 0x61], '\udce2\udc82a'],
      [[0xed, 0xa0, 0x80], '\udced\udca0\udc80'], // an encoded surrogate
      [[0xc0, 0xaf], '\udcc0\udcaf'], // overlong
      [[0xf4, 0x90, 0x80, 0x80], '\udcf4\udc90\udc80\udc80'], // past U+10FFFF
      [[0x80, 0x61, 0xf0, 0x9f, 0x98, 0x80, 0xe2, 0x82, 0xac, 0xff], '\udc80a😀€\udcff'],
    ];
    for (const [bytes, expected] of cases) {
      const { text, undecodable } = decodeUtf8(Buffer.from(bytes));
      assert.equal(text, expected, bytes.map((b) => b.toString(16)).join(' '));
      const escaped = [...text.split('').entries()].filter(([, c]) => c.charCodeAt(0) >= 0xdc80 && c.charCodeAt(0) <= 0xdcff).map(([i]) => i);
      assert.deepEqual(undecodable, escaped, expected);
    }
    assert.deepEqual(decodeUtf8(Buffer.from([0xf0, 0x9f, 0x98, 0x80, 0xfe])), { text: '😀\udcfe', undecodable: [2] });
    // Two ids that a decoder would make one stay two, and their records' JSON says which bytes were sent.
    assert.notEqual(decodeUtf8(Buffer.from([0x69, 0xff])).text, decodeUtf8(Buffer.from([0x69, 0xfe])).text);
    assert.equal(JSON.stringify(decodeUtf8(Buffer.from([0x69, 0xff])).text), '"i\\udcff"');
  });
});
