/**
 * Array parameters rendered as PostgreSQL's array text (arrayLiteral, src/store/json-insert.ts):
 * every value reaches the store as it was, quotes, backslashes, braces, commas, empty strings, the
 * text NULL, non-ASCII and SQL NULL included; numbers and booleans too; other arrays go to the
 * driver unchanged.
 */
import assert from 'node:assert/strict';
import { arrayLiteral, insertArrays } from '../../src/store/json-insert.js';
import { STORES, type TestStore } from '../support/stores.js';

const TRICKY = ['plain', 'with "quotes"', 'back\\slash', 'a\\"b', '{braces},comma', '', 'NULL', 'null', ' spaced ', 'Zoë €😀', 'tab\there', 'new\nline'];

describe('array parameters as array text', () => {
  it('renders strings quoted, backslashes and quotes escaped, absent values as NULL', () => {
    assert.equal(arrayLiteral(['a', 'b"c', 'd\\e', null, undefined]), '{"a","b\\"c","d\\\\e",NULL,NULL}');
    assert.equal(arrayLiteral([1, 2.5, -3, true, false]), '{1,2.5,-3,true,false}');
    assert.equal(arrayLiteral([]), '{}');
  });

  it('renders an array with nothing to escape from its JSON text: null as NULL, the text null quoted', () => {
    assert.equal(arrayLiteral(['a', null, 'null', 'NULL', 1, true, undefined]), '{"a",null,"null","NULL",1,true,null}');
  });

  it('leaves other arrays to the driver', () => {
    const dates = [new Date(0)];
    assert.equal(arrayLiteral(dates), dates);
    const nan = [1, Number.NaN];
    assert.equal(arrayLiteral(nan), nan);
  });

  for (const backend of STORES.filter((s) => s.name === 'postgres')) {
    describe(backend.name, () => {
      let t: TestStore;
      before(async () => { t = await backend.create(); });
      after(async () => t?.drop());

      it('every value comes back from the store as it went in', async () => {
        const values = [...TRICKY, null];
        const result = await t.store.knex.raw('SELECT u AS v, ordinality AS n FROM unnest(?::text[]) WITH ORDINALITY AS u ORDER BY n', [arrayLiteral(values) as string]);
        assert.deepEqual((result as { rows: { v: string | null }[] }).rows.map((r) => r.v), values);
      });

      it('values with nothing to escape (the JSON path) come back as they went in, SQL NULL and the text null apart', async () => {
        const values = ['plain', '', 'NULL', 'null', ' spaced ', 'Zoë €😀', '{braces},comma', null];
        assert.ok(!String(arrayLiteral(values)).includes('\\'));
        const result = await t.store.knex.raw('SELECT u AS v, ordinality AS n FROM unnest(?::text[]) WITH ORDINALITY AS u ORDER BY n', [arrayLiteral(values) as string]);
        assert.deepEqual((result as { rows: { v: string | null }[] }).rows.map((r) => r.v), values);
        const numbers = await t.store.knex.raw('SELECT u AS v FROM unnest(?::float8[]) WITH ORDINALITY AS u ORDER BY ordinality', [arrayLiteral([1, -2.5, 1e21, null]) as string]);
        assert.deepEqual((numbers as { rows: { v: number | null }[] }).rows.map((r) => r.v), [1, -2.5, 1e21, null]);
      });

      it('insertArrays writes the rows with the tricky values, numbers and constants', async () => {
        await t.store.knex.raw('CREATE TABLE array_literal_check (k text, v text, n integer, c text)');
        await t.store.transaction((trx) => insertArrays(trx, 'array_literal_check', { c: ['text', 'const'] },
          { k: ['text', TRICKY.map((_, i) => `k${String(i).padStart(2, '0')}`)], v: ['text', TRICKY], n: ['integer', TRICKY.map((_, i) => i * 10)] }));
        const rows = (await t.store.knex('array_literal_check').orderBy('k').select('v', 'n', 'c')) as { v: string; n: number; c: string }[];
        assert.deepEqual(rows, TRICKY.map((v, i) => ({ v, n: i * 10, c: 'const' })));
      });
    });
  }
});
