/**
 * A pulled page whose JSON text hides what its value shows: a record's bytes that are not UTF-8, a
 * field given twice, a number of 17 significant digits reach the field mapping with the record,
 * which rejects that record alone naming spec field, source field and rule; the same in the
 * page's envelope (a next cursor given twice) fails the page.
 */
import assert from 'node:assert/strict';
import nock from 'nock';
import { SourceError } from '../../connectors/source.js';
import { createRestSource } from '../../connectors/rest/source.js';
import { createMapper } from '../../src/pipeline/map-record.js';
import { BASE, collect, cursorPaging, fakeTime, PATH, rejection, restSource, restStream, testDeps, useNock } from './fixtures.js';

/** ASCII text with the characters `@` and `#` replaced by the bytes 0xff and 0xfe. */
const withBytes = (text: string): Buffer => {
  const bytes = Buffer.from(text, 'latin1');
  bytes[text.indexOf('@')] = 0xff;
  bytes[text.indexOf('#')] = 0xfe;
  return bytes;
};

describe('rest source: what the page text hides', () => {
  useNock();

  it('a record with bytes not UTF-8, a field given twice or a 17-digit number in a field the mapping reads is rejected by the mapping; the others map', async () => {
    const text =
      '{"data":[' +
      '{"id":"ok-1","cust":"c1","amount":10.5},' +
      '{"id":"id-@","cust":"c1","amount":10.5},' +
      '{"id":"id-#","cust":"c1","amount":10.5},' +
      '{"id":"twice","cust":"c1","amount":10,"amount":99999},' +
      '{"id":"digits","cust":"c1","amount":1.0000000000000001},' +
      '{"id":"unread","cust":"c1","amount":1,"ns":1733140000123456789,"x":1,"x":2}' +
      ']}';
    nock(BASE).get(PATH).query(true).reply(200, withBytes(text), { 'content-type': 'application/json' });
    nock(BASE).get(PATH).query(true).reply(200, { data: [] });
    const source = createRestSource(restSource(), testDeps(fakeTime()));
    const pages = await collect(source, restStream());
    const map = createMapper('igaming', 'transactions', { fields: { transaction_id: 'id', customer_id: 'cust', amount_currency: 'amount' }, passthrough: false }, { map: {}, unmapped: 'keep' });
    const results = (pages[0] ?? []).map((record) => map(record));
    assert.deepEqual(results.map((r) => ('error' in r ? [r.error.field, r.error.rule, r.error.message] : (r.record as { transaction_id: string }).transaction_id)), [
      'ok-1',
      ['transaction_id', 'encoding', 'transaction_id: source field id: not valid UTF-8 (bytes that are no character); send the text as UTF-8'],
      ['transaction_id', 'encoding', 'transaction_id: source field id: not valid UTF-8 (bytes that are no character); send the text as UTF-8'],
      ['amount_currency', 'duplicateKey', 'amount_currency: source field amount: given more than once in one object; send each field once (which value is meant is unknown)'],
      ['amount_currency', 'maxSignificantDigits', 'amount_currency: source field amount: more than 15 significant digits as written (1.0000000000000001)'],
      // What the mapping does not read changes nothing loaded.
      'unread',
    ]);
  });

  it('a next cursor given twice in the envelope fails the page, naming the field', async () => {
    nock(BASE).get(PATH).query(true).reply(200, '{"data":[{"id":"a"}],"meta":{"next_cursor":"c2","next_cursor":"c9"}}', { 'content-type': 'application/json' });
    const source = createRestSource(restSource(), testDeps(fakeTime()));
    const error = await rejection(collect(source, restStream(cursorPaging())));
    assert.ok(error instanceof SourceError);
    assert.match(error.message, /^GET https:\/\/partner\.example\/api\/v1\/igaming\/customers\?per_page=2: the response body's field meta\.next_cursor: field "next_cursor" is given more than once in one object; send it once; the page cannot be read as sent$/);
  });
});
