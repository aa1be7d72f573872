import assert from 'node:assert/strict';
import { createDbSource } from '../../connectors/db/source.js';
import { cursorStream, dailyStream, DATABASES, dbSource, deps, useDatabase } from './databases.js';

for (const backend of DATABASES) {
  describe(`db source, inspect (check): ${backend.client}`, () => {
    const db = useDatabase(backend);

    beforeEach(async () => {
      const { sql } = db();
      await db().exec(`CREATE TABLE accounts (id ${sql.bigint} NOT NULL PRIMARY KEY, player_ref ${sql.text} NOT NULL, updated_at ${sql.datetime6} NOT NULL, signup_at ${sql.datetime6}, birth ${sql.date}, country ${sql.text}, deposits ${sql.text}, balance ${sql.decimal})`);
    });

    const mapping = { passthrough: false, fields: { customer_id: 'player_ref', signup_date: 'signup_at', country_code: 'country', last_modified_date: 'updated_at' } };

    it('a table with every mapped column of a compatible type: no problems', async () => {
      const source = createDbSource(dbSource(db()), deps());
      try {
        assert.deepEqual(await source.inspect?.(cursorStream({ mapping })), []);
        // An integer column feeds a string field: the mapping writes its decimal text.
        assert.deepEqual(await source.inspect?.(cursorStream({ mapping: { ...mapping, fields: { ...mapping.fields, customer_id: 'id' } } })), []);
      } finally {
        await source.close?.();
      }
    });

    it('reports a missing table, a missing column and an incompatible type, with the definition field', async () => {
      const source = createDbSource(dbSource(db()), deps());
      try {
        assert.deepEqual(await source.inspect?.(cursorStream({ table: 'players', mapping })), ['streams.customers.table: table or view players does not exist (or this user cannot read it)']);
        const problems = await source.inspect?.(
          cursorStream({
            mapping: { passthrough: false, fields: { ...mapping.fields, customer_id: 'balance', email: { from: 'mail' }, signup_date: 'birth' } },
            tiebreak_column: 'ID',
          }),
        );
        const decimal = backend.client === 'mysql' ? 'DECIMAL' : backend.client === 'postgres' ? 'numeric' : 'DECIMAL(15,2)';
        const date = backend.client === 'postgres' ? 'date' : 'DATE';
        assert.deepEqual(problems, [
          `streams.customers.table accounts: column balance (mapping.fields.customer_id) has type ${decimal}: a ${decimal} column gives numbers with a fraction; the field needs text: select it cast to text in a query (CAST(col AS CHAR) on MySQL, col::text on PostgreSQL) (customer_id is a spec string field)`,
          `streams.customers.table accounts: column birth (mapping.fields.signup_date) has type ${date}: a ${date} column has no time of day; the field needs a date-time (signup_date is a spec date-time field)`,
          'streams.customers.table accounts: column mail (mapping.fields.email) does not exist; its columns: id, player_ref, updated_at, signup_at, birth, country, deposits, balance',
          'streams.customers.table accounts: column ID (tiebreak_column) does not exist; did you mean id? (names are case-sensitive in records)',
        ]);
      } finally {
        await source.close?.();
      }
    });

    it('passthrough: required spec fields must exist; the cursor column must be a date-time', async () => {
      const source = createDbSource(dbSource(db()), deps());
      try {
        const problems = await source.inspect?.(cursorStream({ cursor_column: 'country', mapping: { passthrough: true, fields: { customer_id: 'player_ref' } } }));
        assert.ok(problems?.some((p) => /column signup_date \(spec field signup_date \(passthrough\)\) does not exist/.test(p)), JSON.stringify(problems));
        if (backend.client !== 'sqlite') assert.ok(problems?.some((p) => /column country \(cursor_column\) has type .*: the cursor column must be a date-time/.test(p)), JSON.stringify(problems));
      } finally {
        await source.close?.();
      }
    });

    it('a stream query: its result columns are checked; a failing query is reported', async () => {
      const source = createDbSource(dbSource(db()), deps());
      try {
        const query = cursorStream({ table: undefined, query: 'SELECT a.player_ref, a.updated_at, a.id FROM accounts a WHERE a.updated_at >= :from AND a.updated_at < :to', cursor_column: 'a.updated_at', tiebreak_column: 'a.id', mapping: { passthrough: false, fields: { customer_id: 'player_ref', country_code: 'country' } } });
        assert.deepEqual(await source.inspect?.(query), ['streams.customers.query: column country (mapping.fields.country_code) does not exist; its columns: player_ref, updated_at, id']);
        const broken = await source.inspect?.(cursorStream({ table: undefined, query: 'SELECT * FROM nowhere WHERE updated_at >= :from', mapping: { passthrough: false, fields: {} } }));
        assert.equal(broken?.length, 1);
        assert.match(broken?.[0] ?? '', /^streams\.customers\.query: check streams\.customers \(query\): .*nowhere/);
        const daily = dailyStream({ table: 'accounts', date_column: 'updated_at', mapping: { passthrough: false, fields: {} } });
        const day = await source.inspect?.(daily);
        assert.match(day?.[0] ?? '', /column updated_at \(date_column\) has type .*: the day column must be a DATE/);
      } finally {
        await source.close?.();
      }
    });
  });
}
