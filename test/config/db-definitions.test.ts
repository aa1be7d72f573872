import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { DbSource, DbStream, WarehouseSource, WarehouseStream } from '../../src/config/definition.js';
import { formatDefinitionError, loadDefinition } from '../../src/config/load-definitions.js';
import { connectionUrlProblem } from '../../src/config/definition-problems.js';
import { DEFINITION_DEFAULTS } from '../../src/config/definition-defaults.js';
import { hasChangeColumn } from '../../src/config/build-definition.js';
import { scanQuery } from '../../src/config/query-scan.js';
import type { DefinitionError } from '../../src/config/load-definitions.js';
import { packageRoot } from '../../src/paths.js';
import type { Entity } from '../../src/types.js';
import { dbDefinition, definitionFolder, warehouseDefinition } from './fixtures.js';
import type { DefinitionFolder } from './fixtures.js';

const PASSWORD = 'r3plica-Pa55/word';
const ENV = {
  TEST_DB_URL: `mysql://reader:${encodeURIComponent(PASSWORD)}@replica.partner.example:3306/prop`,
  TEST_WAREHOUSE_URL: 'postgres://reader:wh-secret-1@dwh.partner.example:5432/reporting',
  DB_PASSWORD: PASSWORD,
};

/** The errors of one file, formatted, with the folder removed from the file name. */
const lines = (errors: DefinitionError[], dir: string): string[] => errors.map((e) => formatDefinitionError({ ...e, file: e.file.slice(dir.length + 1) }));

const RELATION_ERROR =
  'must be a plain SQL identifier: letters, digits and _, not starting with a digit, optionally qualified once as schema.name; a definition names tables and columns, it cannot carry SQL';
const COLUMN_ERROR =
  'must be a plain SQL column name: letters, digits and _, not starting with a digit, without a table prefix (the name the rows carry); a definition names tables and columns, it cannot carry SQL';
/** A cursor query keeping the source's contract: the window, the keyset after (:cursor, :id), the page size. */
const CURSOR_QUERY = (table: string, c: string, id: string): string =>
  `SELECT * FROM ${table} WHERE ${c} >= :from AND ${c} < :to AND ${c} >= :cursor AND (${c} > :cursor OR (${c} = :cursor AND ${id} > :id)) ORDER BY ${c}, ${id} LIMIT :limit`;
const MISSING_CURSOR_PARAMS = (missing: string): string =>
  `must filter, order and page itself with :from, :to, :cursor, :id, :limit: WHERE c >= :from AND c < :to AND c >= :cursor AND (c > :cursor OR (c = :cursor AND id > :id)) ORDER BY c, id LIMIT :limit; missing ${missing}`;
const REST_PARAM_ERROR =
  "is a REST query parameter: db and warehouse streams are bounded by their columns (cursor_column, date_column) or the query's named parameters; remove it";

describe('connector definitions: db replica sources', () => {
  let folder: DefinitionFolder;
  beforeEach(() => (folder = definitionFolder()));
  afterEach(() => folder.remove());

  const load = async (text: string, env: NodeJS.ProcessEnv = ENV) => loadDefinition(folder.write('acme.yaml', text), env);

  it('a minimal definition gets every default', async () => {
    const { definition, errors } = await load(
      dbDefinition('acme', {
        streams: `  customers:
    table: accounts
    cursor_column: updated_at
    tiebreak_column: account_id
  transactions:
    table: payments
    cursor_column: updated_at
    tiebreak_column: payment_id
  activity:
    table: daily_trading
    date_column: trade_date`,
      }),
    );
    assert.deepEqual(errors, []);
    assert.ok(definition);
    assert.deepEqual(definition.source, {
      type: 'db',
      client: 'mysql',
      url: ENV.TEST_DB_URL,
      page_size: 5000,
      safety_lag_ms: 5_000,
      timezone: 'UTC',
      statement_timeout_ms: 5 * 60_000,
      run_budget_ms: 15 * 60_000,
    } satisfies DbSource);
    const streams = definition.streams as Partial<Record<Entity, DbStream>>;
    assert.deepEqual(streams.customers, {
      entity: 'customers',
      incremental: { mode: 'cursor', cursor_field: 'updated_at', lookback_ms: 10 * 60_000, start: '' },
      mapping: { fields: {}, passthrough: true },
      schedule: '*/4 * * * *',
      table: 'accounts',
      cursor_column: 'updated_at',
      tiebreak_column: 'account_id',
    } satisfies DbStream);
    assert.deepEqual(streams.transactions?.incremental, { mode: 'cursor', cursor_field: 'updated_at', lookback_ms: 10 * 60_000, start: '' });
    assert.equal(streams.transactions?.schedule, '*/4 * * * *');
    assert.deepEqual(streams.activity, {
      entity: 'activity',
      incremental: { mode: 'daily', late_days: 2, start: '' },
      mapping: { fields: {}, passthrough: true },
      schedule: '15 0 * * *',
      table: 'daily_trading',
      date_column: 'trade_date',
    } satisfies DbStream);
    // No REST parameters in the resolved increments.
    assert.ok(!('from_param' in (streams.customers?.incremental ?? {})));
    assert.ok(!('date_param' in (streams.activity?.incremental ?? {})));
  });

  it('every setting given', async () => {
    const { definition, errors } = await load(
      dbDefinition('acme', {
        source: '  page_size: 100000\n  safety_lag: PT30S\n  timezone: Europe/Malta\n  statement_timeout: PT1M\n  run_budget: PT1H\n',
        streams: `  customers:
    query: ${CURSOR_QUERY('crm.accounts', 'updated_at', 'account_id')}
    cursor_column: updated_at
    tiebreak_column: account_id
    incremental: { mode: cursor, lookback: PT1H, start: 2026-01-01 }
    mapping: { passthrough: false, fields: { customer_id: account_id } }
    schedule: "*/15 * * * *"
  activity:
    query: SELECT * FROM trades WHERE day BETWEEN :date_from AND :date_to
    incremental: { mode: daily, late_days: 5, start: 2026-01-01 }`,
      }),
    );
    assert.deepEqual(errors, []);
    assert.deepEqual(definition?.source, {
      type: 'db',
      client: 'mysql',
      url: ENV.TEST_DB_URL,
      page_size: 100_000,
      safety_lag_ms: 30_000,
      timezone: 'Europe/Malta',
      statement_timeout_ms: 60_000,
      run_budget_ms: 3_600_000,
    });
    const streams = definition?.streams as Partial<Record<Entity, DbStream>>;
    assert.deepEqual(streams.customers, {
      entity: 'customers',
      incremental: { mode: 'cursor', cursor_field: 'updated_at', lookback_ms: 3_600_000, start: '2026-01-01' },
      mapping: { fields: { customer_id: 'account_id' }, passthrough: false },
      schedule: '*/15 * * * *',
      query: CURSOR_QUERY('crm.accounts', 'updated_at', 'account_id'),
      cursor_column: 'updated_at',
      tiebreak_column: 'account_id',
    });
    assert.deepEqual(streams.activity?.incremental, { mode: 'daily', late_days: 5, start: '2026-01-01' });
    assert.equal(streams.activity?.query, 'SELECT * FROM trades WHERE day BETWEEN :date_from AND :date_to');
    assert.equal(streams.activity?.date_column, undefined);
  });

  describe('transactions without a change column: lookback P3D', () => {
    const transactions = (lines: string): string => `  transactions:
    table: payments
    tiebreak_column: payment_id
${lines}`;
    const lookback = async (text: string): Promise<number | undefined> => {
      const { definition, errors } = await load(dbDefinition('acme', { streams: text }));
      assert.deepEqual(errors, []);
      const incremental = definition?.streams.transactions?.incremental;
      return incremental?.mode === 'cursor' ? incremental.lookback_ms : undefined;
    };
    const DAYS_3 = 3 * 86_400_000;

    it('when cursor_column is the column transaction_date is mapped from', async () => {
      assert.equal(await lookback(transactions('    cursor_column: paid_at\n    mapping: { fields: { transaction_date: paid_at } }')), DAYS_3);
      assert.equal(await lookback(transactions('    cursor_column: paid_at\n    mapping: { fields: { transaction_date: { from: paid_at, datetime: { format: sql } } } }')), DAYS_3);
      // Passthrough: a column already named transaction_date.
      assert.equal(await lookback(transactions('    cursor_column: transaction_date')), DAYS_3);
    });

    it('not with a change column, and never over an explicit lookback', async () => {
      assert.equal(await lookback(transactions('    cursor_column: updated_at\n    mapping: { fields: { transaction_date: paid_at } }')), 600_000);
      assert.equal(await lookback(transactions('    cursor_column: transaction_date\n    mapping: { passthrough: false }')), 600_000);
      assert.equal(await lookback(transactions('    cursor_column: paid_at\n    mapping: { fields: { transaction_date: paid_at } }\n    incremental: { lookback: PT1H }')), 3_600_000);
      assert.equal(DEFINITION_DEFAULTS.db.lookback_without_change_column, 'P3D');
    });

    it('hasChangeColumn', () => {
      assert.equal(hasChangeColumn('updated_at', { fields: {}, passthrough: true }), true);
      assert.equal(hasChangeColumn('transaction_date', { fields: {}, passthrough: true }), false);
      assert.equal(hasChangeColumn('created', { fields: { transaction_date: { from: 'created', datetime: { format: 'sql' } } }, passthrough: true }), false);
      assert.equal(hasChangeColumn('created', { fields: { transaction_date: { const: '2026-01-01T00:00:00Z' } }, passthrough: true }), true);
    });
  });

  describe('the connection URL is a secret', () => {
    it('a literal is refused and never repeated', async () => {
      const literal = `mysql://root:${PASSWORD}@db.example/prop`;
      const { definition, errors } = await load(dbDefinition('acme', { url: `  url: ${literal}` }));
      assert.equal(definition, undefined);
      assert.deepEqual(lines(errors, folder.dir), ['acme.yaml: source.url (line 6): secret fields take ${ENV_VAR} or url_file, never a literal']);
      assert.ok(!JSON.stringify(errors).includes(PASSWORD));
    });

    it('${ENV} is resolved; the URL and its password are secrets', async () => {
      const { definition, errors } = await load(dbDefinition('acme'));
      assert.deepEqual(errors, []);
      assert.equal((definition?.source as DbSource).url, ENV.TEST_DB_URL);
      // The whole URL, and its password as written (percent-encoded) and decoded.
      assert.deepEqual(definition?.secrets, [ENV.TEST_DB_URL, encodeURIComponent(PASSWORD), PASSWORD]);
    });

    it('embedded: the password from its own variable', async () => {
      const text = dbDefinition('acme', { url: '  url: postgres://reader:${DB_PASSWORD}@db.example/prop' }).replace('client: mysql', 'client: postgres');
      const encoded = encodeURIComponent(PASSWORD);
      const { definition, errors } = await load(text, { DB_PASSWORD: encoded });
      assert.deepEqual(errors, []);
      assert.equal((definition?.source as DbSource).url, `postgres://reader:${encoded}@db.example/prop`);
      assert.deepEqual(definition?.secrets, [`postgres://reader:${encoded}@db.example/prop`, encoded, PASSWORD]);
      // Not percent-encoded, the / of the password ends the host part: an invalid URL, not shown.
      const raw = await load(text, { DB_PASSWORD: PASSWORD });
      assert.deepEqual(lines(raw.errors, folder.dir), [
        'acme.yaml: source.url (line 6): is not a valid postgres: URL (percent-encode special characters of the password, e.g. @ as %40); the value is a secret, not shown',
      ]);
      assert.ok(!JSON.stringify(raw.errors).includes(PASSWORD));
    });

    it('from url_file', async () => {
      folder.write('replica.url', `${ENV.TEST_DB_URL}\n`);
      const { definition, errors } = await load(dbDefinition('acme', { url: '  url_file: replica.url' }), {});
      assert.deepEqual(errors, []);
      assert.equal((definition?.source as DbSource).url, ENV.TEST_DB_URL);
      assert.ok(definition?.secrets.includes(ENV.TEST_DB_URL));
    });

    it('a missing variable is named, its neighbours are not shown', async () => {
      const { errors } = await load(dbDefinition('acme'), { OTHER: ENV.TEST_DB_URL });
      assert.deepEqual(lines(errors, folder.dir), ['acme.yaml: source.url (line 6): environment variable TEST_DB_URL is not set']);
    });

    it('exactly one of url and url_file', async () => {
      const both = await load(dbDefinition('acme', { url: '  url: ${TEST_DB_URL}\n  url_file: replica.url' }));
      assert.deepEqual(lines(both.errors, folder.dir), ['acme.yaml: source (line 4): needs exactly one of url (a ${ENV_VAR} reference) or url_file']);
      const neither = await load(dbDefinition('acme', { url: '' }));
      assert.deepEqual(lines(neither.errors, folder.dir), ['acme.yaml: source (line 4): needs exactly one of url (a ${ENV_VAR} reference) or url_file']);
    });

    it('its scheme must fit the client; the value is never shown', async () => {
      const cases: [string, string, string][] = [
        ['postgres', ENV.TEST_DB_URL, "acme.yaml: source.url (line 6): the URL's scheme mysql: does not fit client postgres: use postgres:// or postgresql://"],
        ['mysql', 'sqlite:data/x.sqlite', "acme.yaml: source.url (line 6): the URL's scheme sqlite: does not fit client mysql: use mysql:// or mariadb://"],
        ['sqlite', ENV.TEST_DB_URL, "acme.yaml: source.url (line 6): the URL's scheme mysql: does not fit client sqlite: use sqlite:path/to/file.sqlite"],
        ['mysql', `reader:${PASSWORD}@db`, 'acme.yaml: source.url (line 6): must be a connection URL for client mysql (mysql:// or mariadb://); the value is a secret, not shown'],
        ['mysql', `mysql://reader:${PASSWORD}@`, 'acme.yaml: source.url (line 6): is not a valid mysql: URL (percent-encode special characters of the password, e.g. @ as %40); the value is a secret, not shown'],
        ['sqlite', 'sqlite:', 'acme.yaml: source.url (line 6): a sqlite: URL needs a file path, e.g. sqlite:data/replica.sqlite'],
      ];
      for (const [client, url, expected] of cases) {
        const { errors } = await load(dbDefinition('acme').replace('client: mysql', `client: ${client}`), { TEST_DB_URL: url });
        assert.deepEqual(lines(errors, folder.dir), [expected], `${client} ${url}`);
        assert.ok(!JSON.stringify(errors).includes(PASSWORD));
      }
      // From a file, the error is at url_file.
      folder.write('replica.url', 'postgres://reader:x@db/prop');
      const { errors } = await load(dbDefinition('acme', { url: '  url_file: replica.url' }), {});
      assert.deepEqual(lines(errors, folder.dir), ["acme.yaml: source.url_file (line 6): the URL's scheme postgres: does not fit client mysql: use mysql:// or mariadb://"]);
    });

    it('a URL of the wrong type is not shown; with the source type left out a literal is still refused', async () => {
      const number = await load(dbDefinition('acme', { url: '  url: 123456789' }));
      assert.deepEqual(lines(number.errors, folder.dir), ['acme.yaml: source.url (line 6): must be a string']);
      const untyped = await load(dbDefinition('acme', { url: `  url: mysql://root:${PASSWORD}@db/prop` }).replace('  type: db\n', ''));
      assert.deepEqual(lines(untyped.errors, folder.dir), [
        'acme.yaml: source.type (line 4): is required but missing; one of rest, db, warehouse',
        'acme.yaml: source.url (line 5): secret fields take ${ENV_VAR} or url_file, never a literal',
      ]);
      assert.ok(!JSON.stringify(untyped.errors).includes(PASSWORD));
    });

    it('accepted forms', () => {
      assert.equal(connectionUrlProblem('mysql', 'mariadb://u:p@host:3306/db'), undefined);
      assert.equal(connectionUrlProblem('postgres', 'postgresql://u:p@host/db?sslmode=require'), undefined);
      assert.equal(connectionUrlProblem('sqlite', 'sqlite://data/replica.sqlite'), undefined);
      assert.equal(connectionUrlProblem('sqlite', 'sqlite::memory:'), undefined);
    });
  });

  const cases: { name: string; text: string; expected: string[] }[] = [
    {
      name: 'source: client, bounds, durations, zone',
      text: dbDefinition('acme', { source: '  page_size: 100001\n  safety_lag: 5 seconds\n  timezone: Mars/Base\n  statement_timeout: P1M\n  base_url: https://x\n' }).replace('client: mysql', 'client: oracle'),
      expected: [
        'source.client (line 5): must be one of mysql, postgres, sqlite, got "oracle"',
        'source.page_size (line 7): must be <= 100000, got 100001',
        'source.safety_lag (line 8): must be an ISO 8601 duration of days, hours, minutes and seconds, e.g. PT30S, PT10M, P3D, P1DT12H, got "5 seconds"',
        'source.timezone (line 9): unknown time zone "Mars/Base": use an IANA name such as Europe/Malta, or UTC',
        'source.statement_timeout (line 10): must be an ISO 8601 duration of days, hours, minutes and seconds, e.g. PT30S, PT10M, P3D, P1DT12H, got "P1M"',
        'source.base_url (line 11): unknown key "base_url"; allowed keys: type, client, url, url_file, page_size, safety_lag, timezone, statement_timeout, run_budget',
      ],
    },
    {
      name: 'source: page_size 0, a fixed offset is not an IANA zone',
      text: dbDefinition('acme', { source: '  page_size: 0\n  timezone: UTC+2\n' }),
      expected: ['source.page_size (line 7): must be >= 1, got 0', 'source.timezone (line 8): unknown time zone "UTC+2": use an IANA name such as Europe/Malta, or UTC'],
    },
    {
      name: 'client missing',
      text: dbDefinition('acme').replace('  client: mysql\n', ''),
      expected: ['source.client (line 4): is required but missing'],
    },
    {
      name: 'exactly one of table or query',
      text: dbDefinition('acme', {
        streams: `  customers:
    table: accounts
    query: ${CURSOR_QUERY('accounts', 'updated_at', 'account_id')}
    cursor_column: updated_at
    tiebreak_column: account_id
  activity:
    date_column: day`,
      }),
      expected: [
        'streams.customers (line 9): needs exactly one of table (a table or view name) or query (one SELECT)',
        'streams.activity (line 14): needs exactly one of table (a table or view name) or query (one SELECT)',
      ],
    },
    {
      name: 'cursor streams need both keyset columns, and two different ones',
      text: dbDefinition('acme', {
        streams: `  customers:
    table: accounts
  transactions:
    table: payments
    cursor_column: updated_at
    tiebreak_column: updated_at`,
      }),
      expected: [
        'streams.customers.cursor_column (line 9): is required but missing',
        'streams.customers.tiebreak_column (line 9): is required but missing',
        'streams.transactions.tiebreak_column (line 13): must differ from cursor_column: a unique column (the primary key) orders the rows that share a cursor value',
      ],
    },
    {
      name: 'activity: a table needs date_column; cursor columns are for cursor streams',
      text: dbDefinition('acme', {
        streams: `  activity:
    table: trades
    cursor_column: closed_at`,
      }),
      expected: [
        'streams.activity.date_column (line 9): is required when table is given',
        'streams.activity.cursor_column (line 10): unknown key "cursor_column"; allowed keys: table, query, date_column, incremental, mapping, schedule',
      ],
    },
    {
      name: 'REST-only keys are refused with the reason',
      text: dbDefinition('acme', {
        streams: `  customers:
    path: /api/customers
    table: accounts
    cursor_column: updated_at
    tiebreak_column: account_id
    pagination: { type: page }
    incremental:
      cursor_field: updated_at
      from_param: modified_since
      to_param: modified_until
  activity:
    table: trades
    date_column: day
    incremental:
      date_param: date`,
      }),
      expected: [
        'streams.customers.path (line 9): unknown key "path"; allowed keys: table, query, cursor_column, tiebreak_column, incremental, soft_delete, mapping, schedule',
        'streams.customers.pagination (line 13): unknown key "pagination"; allowed keys: table, query, cursor_column, tiebreak_column, incremental, soft_delete, mapping, schedule',
        'streams.customers.incremental.cursor_field (line 15): is the REST form: a db stream names its change column with cursor_column (beside table or query); remove it',
        `streams.customers.incremental.from_param (line 16): ${REST_PARAM_ERROR}`,
        `streams.customers.incremental.to_param (line 17): ${REST_PARAM_ERROR}`,
        `streams.activity.incremental.date_param (line 22): ${REST_PARAM_ERROR}`,
      ],
    },
    {
      name: 'a soft_delete column is a plain column name, of customers and transactions only',
      text: dbDefinition('acme', {
        streams: `  customers:
    table: accounts
    cursor_column: updated_at
    tiebreak_column: account_id
    soft_delete: { column: "a.deleted_at" }
  activity:
    table: trades
    date_column: day
    soft_delete: { column: deleted_at }`,
      }),
      expected: [
        'streams.customers.soft_delete.column (line 12): must be a plain SQL column name: letters, digits and _, not starting with a digit, without a table prefix (the name the rows carry); a definition names tables and columns, it cannot carry SQL, got "a.deleted_at"',
        'streams.activity.soft_delete (line 16): unknown key "soft_delete"; allowed keys: table, query, date_column, incremental, mapping, schedule',
      ],
    },
    {
      name: 'incremental modes and bounds',
      text: dbDefinition('acme', {
        streams: `  customers:
    table: accounts
    cursor_column: updated_at
    tiebreak_column: account_id
    incremental: { mode: daily, lookback: 10m, start: yesterday, late_days: 1 }
  activity:
    table: trades
    date_column: day
    incremental: { mode: cursor, late_days: 32, start: 2026-13-01 }`,
      }),
      expected: [
        'streams.customers.incremental.late_days (line 12): unknown key "late_days"; allowed keys: mode, lookback, start',
        'streams.customers.incremental.mode (line 12): must be cursor: customers and transactions are pulled by a source change field; only activity is daily, got "daily"',
        'streams.customers.incremental.lookback (line 12): must be an ISO 8601 duration of days, hours, minutes and seconds, e.g. PT30S, PT10M, P3D, P1DT12H, got "10m"',
        'streams.customers.incremental.start (line 12): must be an ISO 8601 date-time with a zone (2024-05-01T00:00:00Z) or a date (2024-05-01, midnight UTC), got "yesterday"',
        'streams.activity.incremental.mode (line 16): must be daily: activity is pulled by whole UTC days, got "cursor"',
        'streams.activity.incremental.late_days (line 16): must be <= 31, got 32',
        'streams.activity.incremental.start (line 16): must be a date YYYY-MM-DD, got "2026-13-01"',
      ],
    },
    {
      name: 'mapping and schedule are checked as for REST',
      text: dbDefinition('acme', {
        streams: `  customers:
    table: accounts
    cursor_column: updated_at
    tiebreak_column: account_id
    mapping: { fields: { player_id: account_id, phase: { from: stage, number: true } } }
    schedule: "every 5 minutes"`,
      }),
      expected: [
        'streams.customers.mapping.fields.player_id (line 12): "player_id" is not a spec field of prop-trading customers; spec fields: customer_id, signup_date, affiliate_id, last_modified_date, campaign_id, click_id, lang_id, country_code, kyc_status_id, sales_status_id, first_name, last_name, email, challenge_type, phase, account_size',
        'streams.customers.mapping.fields.phase.number (line 12): number applies to number fields; phase is a string field',
        'streams.customers.schedule (line 13): not a valid cron expression (5 or 6 fields, UTC): expected 5 or 6 fields but got 3',
      ],
    },
  ];
  for (const { name, text, expected } of cases) {
    it(name, async () => {
      const { definition, errors } = await load(text);
      assert.equal(definition, undefined);
      assert.deepEqual(lines(errors, folder.dir), expected.map((line) => `acme.yaml: ${line}`));
    });
  }

  describe('identifiers cannot carry SQL', () => {
    const attacks = [
      'accounts; DROP TABLE accounts',
      'accounts --',
      'accounts WHERE 1=1',
      '"accounts"',
      '`accounts`',
      'a.b.c',
      '1accounts',
      'accounts)',
      'acc/**/ounts',
      "accounts'",
      'accounts\nUNION SELECT 1',
      'crm.',
      '',
    ];
    for (const attack of attacks) {
      it(`table ${JSON.stringify(attack)}`, async () => {
        const { errors } = await load(
          dbDefinition('acme', {
            streams: `  customers:
    table: ${JSON.stringify(attack)}
    cursor_column: ${JSON.stringify(attack)}
    tiebreak_column: account_id`,
          }),
        );
        const got = `, got ${JSON.stringify(attack)}`;
        assert.deepEqual(lines(errors, folder.dir), [
          `acme.yaml: streams.customers.table (line 9): ${RELATION_ERROR}${got}`,
          `acme.yaml: streams.customers.cursor_column (line 10): ${COLUMN_ERROR}${got}`,
        ]);
      });
    }

    it('a table may be schema.name; a column is the name the rows carry, without a prefix', async () => {
      const ok = await load(dbDefinition('acme', { streams: '  customers:\n    table: crm.accounts\n    cursor_column: updated_at\n    tiebreak_column: _id2' }));
      assert.deepEqual(ok.errors, []);
      const { errors } = await load(dbDefinition('acme', { streams: '  customers:\n    table: crm.accounts\n    cursor_column: a.updated_at\n    tiebreak_column: account_id' }));
      assert.deepEqual(lines(errors, folder.dir), [`acme.yaml: streams.customers.cursor_column (line 10): ${COLUMN_ERROR}, got "a.updated_at"`]);
    });

    it('a name no longer than the server accepts', async () => {
      const long = 'a'.repeat(64);
      const text = (client: string): string =>
        dbDefinition('acme', { streams: `  customers:\n    table: crm.${long}\n    cursor_column: ${long}\n    tiebreak_column: id` }).replace('client: mysql', `client: ${client}`);
      assert.deepEqual((await load(text('mysql'))).errors, []);
      const { errors } = await load(text('postgres'), { TEST_DB_URL: ENV.TEST_WAREHOUSE_URL });
      assert.deepEqual(lines(errors, folder.dir), [
        'acme.yaml: streams.customers.table (line 9): a name may have at most 63 characters on postgres',
        'acme.yaml: streams.customers.cursor_column (line 10): a name may have at most 63 characters on postgres',
      ]);
    });
  });

  describe('queries', () => {
    const customersQuery = (query: string): string =>
      dbDefinition('acme', { streams: `  customers:\n    query: |\n${query.replace(/^/gm, '      ')}\n    cursor_column: updated_at\n    tiebreak_column: account_id` });

    it('a SELECT with the listed parameters, casts, comments and quotes loads', async () => {
      const query = `-- changed accounts; the keyset is the source's
WITH recent AS (
  SELECT a.*, 'x; :nope -- ' AS note, "quoted;name", \`tick;name\`
    FROM accounts a /* :nope; DELETE */
   WHERE a.updated_at >= :from AND a.updated_at < :to AND a.day = :from::date
)
SELECT * FROM recent r
 WHERE r.updated_at >= :cursor
   AND (r.updated_at > :cursor OR (r.updated_at = :cursor AND r.account_id > :id))
 ORDER BY r.updated_at, r.account_id
 LIMIT :limit`;
      const { definition, errors } = await load(customersQuery(query));
      assert.deepEqual(errors, []);
      assert.equal((definition?.streams.customers as DbStream).query, query + '\n');
    });

    it('every problem, on its own line of the query', async () => {
      const query = `SELECT a.*
  FROM accounts a
 WHERE a.updated_at >= :since AND a.x = ? AND a.y = $1;
DELETE FROM accounts WHERE x = :since # y
  AND z = 'C:\\temp' AND w = :mode`;
      const { errors } = await load(customersQuery(query));
      assert.deepEqual(
        errors.map((e) => [e.path, e.line, e.column, e.message]),
        [
          // The query as a whole: at its value (the | line).
          ['streams.customers.query', 9, 12, MISSING_CURSOR_PARAMS(':from, :to, :cursor, :id, :limit')],
          ['streams.customers.query', 12, 47, '? is a placeholder to the database drivers, even inside quotes: use the named parameters, and write a literal question mark as CHR(63)'],
          ['streams.customers.query', 12, 59, '$1-style placeholders are not used: use the named parameters (:from, :date_from, …)'],
          ['streams.customers.query', 12, 61, 'must be a single statement: remove the ; (a query is one SELECT)'],
          ['streams.customers.query', 12, 30, 'unknown parameter :since; a customers query may use :from, :to, :cursor, :id, :limit'],
          ['streams.customers.query', 13, 7, 'must only read: DELETE is not allowed in a query'],
          ['streams.customers.query', 13, 45, '# is not allowed outside quotes (a comment in MySQL, an operator in PostgreSQL): write -- comments'],
          ['streams.customers.query', 14, 20, 'a backslash is not allowed in a query: MySQL reads it as an escape, PostgreSQL and SQLite do not'],
          ['streams.customers.query', 14, 35, 'unknown parameter :mode; a customers query may use :from, :to, :cursor, :id, :limit'],
        ],
      );
    });

    it('one line: the column within it', async () => {
      const { errors } = await load(
        dbDefinition('acme', { streams: '  customers:\n    query: "SELECT * FROM accounts WHERE x = :when"\n    cursor_column: updated_at\n    tiebreak_column: account_id' }),
      );
      assert.deepEqual(
        errors.map((e) => [e.path, e.line, e.column, e.message]),
        [
          ['streams.customers.query', 9, 46, 'unknown parameter :when; a customers query may use :from, :to, :cursor, :id, :limit'],
          ['streams.customers.query', 9, 12, MISSING_CURSOR_PARAMS(':from, :to, :cursor, :id, :limit')],
        ],
      );
    });

    it('only reads', async () => {
      const cases: [string, string[]][] = [
        ['UPDATE accounts SET stage = 1', ['must be a single SELECT (or WITH … SELECT), not UPDATE']],
        ['DROP TABLE accounts', ['must be a single SELECT (or WITH … SELECT), not DROP']],
        ['WITH gone AS (DELETE FROM accounts RETURNING *) SELECT * FROM gone', ['must only read: DELETE is not allowed in a query']],
        ['SELECT * INTO backup FROM accounts', ['must only read: INTO is not allowed in a query']],
        ['SELECT * FROM accounts FOR UPDATE', ['must only read: UPDATE is not allowed in a query']],
        ['SELECT 1; SELECT 2', ['must be a single statement: remove the ; (a query is one SELECT)']],
        ['SELECT 1 /*! ; DROP TABLE accounts */', ['a MySQL executable comment /*! … */ runs its content: not allowed', 'must be a single statement: remove the ; (a query is one SELECT)']],
        ['-- only a comment', ['must be a SELECT statement']],
        ["SELECT 'open", ['the quote \' is not closed']],
        ['SELECT 1 /* open', ['a /* comment is not closed']],
      ];
      for (const [query, expected] of cases) {
        const { errors } = await load(customersQuery(query));
        assert.deepEqual(
          errors.map((e) => e.message).filter((m) => !m.startsWith('must filter, order and page itself')),
          expected,
          query,
        );
      }
    });

    it('activity: :date_from and :date_to, both, and nothing else', async () => {
      const activity = (lines: string): string => dbDefinition('acme', { streams: `  activity:\n${lines}` });
      const { errors } = await load(activity('    query: SELECT * FROM trades WHERE day >= :date_from AND id > :cursor'));
      assert.deepEqual(lines(errors, folder.dir), [
        'acme.yaml: streams.activity.query (line 9): unknown parameter :cursor; an activity query may use :date_from, :date_to',
        'acme.yaml: streams.activity.query (line 9): must select the days read with :date_from and :date_to (UTC days, both included); missing :date_to',
      ]);
      // Also with date_column (the column `check` inspects): the query still selects its days.
      const none = await load(activity('    query: SELECT * FROM trades\n    date_column: day'));
      assert.deepEqual(
        none.errors.map((e) => e.message),
        ['must select the days read with :date_from and :date_to (UTC days, both included); missing :date_from, :date_to'],
      );
      const withColumn = await load(activity('    query: SELECT date(closed_at) AS day, account_id FROM trades WHERE date(closed_at) BETWEEN :date_from AND :date_to\n    date_column: day'));
      assert.deepEqual(withColumn.errors, []);
      assert.equal((withColumn.definition?.streams.activity as DbStream).date_column, 'day');
    });

    it('a parameter name inside quotes or a comment would be bound there too', async () => {
      const { errors } = await load(
        dbDefinition('acme', {
          streams: `  activity:\n    query: "SELECT ':date_from' AS s FROM t /* :date_to */ WHERE d BETWEEN :date_from AND :date_to -- ':nope' is fine"`,
        }),
      );
      assert.deepEqual(
        errors.map((e) => [e.column, e.message]),
        [
          [21, ':date_from inside quotes or a comment would be bound there too (the binder does not see quotes): remove it'],
          [48, ':date_to inside quotes or a comment would be bound there too (the binder does not see quotes): remove it'],
        ],
      );
    });

    it('a cursor query may not use the day parameters', async () => {
      const { errors } = await load(
        dbDefinition('acme', { streams: '  transactions:\n    query: SELECT * FROM payments WHERE day = :date_from\n    cursor_column: updated_at\n    tiebreak_column: payment_id' }),
      );
      assert.deepEqual(lines(errors, folder.dir), [
        'acme.yaml: streams.transactions.query (line 9): unknown parameter :date_from; a transactions query may use :from, :to, :cursor, :id, :limit',
        `acme.yaml: streams.transactions.query (line 9): ${MISSING_CURSOR_PARAMS(':from, :to, :cursor, :id, :limit')}`,
      ]);
    });
  });
});

describe('connector definitions: scanQuery', () => {
  it('finds the named parameters outside quotes and comments', () => {
    const sql = "SELECT ':x', \":y\", `:z` -- :c\n, x::int /* :d */ FROM t WHERE a = :from AND b = :to_day AND c = :_p1";
    const { parameters, hidden, problems } = scanQuery(sql);
    assert.deepEqual(problems, []);
    assert.deepEqual(
      parameters.map((p) => p.name),
      ['from', 'to_day', '_p1'],
    );
    assert.deepEqual(
      hidden.map((p) => p.name),
      ['x', 'y', 'z', 'c', 'd'],
    );
    for (const { name, offset } of [...parameters, ...hidden]) assert.equal(sql.slice(offset, offset + name.length + 1), `:${name}`);
  });

  it('sees code where a dialect might: --x and # and $$ are not skipped', () => {
    // MySQL needs whitespace after --: "--1;" is code there.
    assert.deepEqual(
      scanQuery('SELECT 1 --1; DROP TABLE t').problems.map((p) => p.message),
      ['must be a single statement: remove the ; (a query is one SELECT)'],
    );
    assert.deepEqual(
      scanQuery('SELECT $$;$$').problems.map((p) => p.message),
      ['must be a single statement: remove the ; (a query is one SELECT)'],
    );
    // A quote doubled stays inside the string; a backslash would end it early in MySQL.
    assert.deepEqual(scanQuery("SELECT 'it''s; fine'").problems, []);
    // PostgreSQL and SQLite read one string here; MySQL ends it at '' and runs the DELETE: the backslash alone refuses it.
    assert.deepEqual(
      scanQuery("SELECT 'x\\''; DELETE FROM t; -- '").problems.map((p) => p.message),
      ['a backslash is not allowed in a query: MySQL reads it as an escape, PostgreSQL and SQLite do not'],
    );
    // The drivers' placeholders, even in quotes; knex's identifier binding.
    assert.deepEqual(
      scanQuery("SELECT 'why?' FROM t WHERE a = :from: ").problems.map((p) => p.message),
      [
        '? is a placeholder to the database drivers, even inside quotes: use the named parameters, and write a literal question mark as CHR(63)',
        ':from: is an identifier binding, not a value: write :from',
      ],
    );
    assert.deepEqual(scanQuery('SELECT :from::date, x::text').problems, []);
    // A comment ends at a carriage return too (PostgreSQL).
    assert.deepEqual(
      scanQuery('SELECT 1 -- x\r; DELETE FROM t').problems.map((p) => p.message),
      ['must be a single statement: remove the ; (a query is one SELECT)', 'must only read: DELETE is not allowed in a query'],
    );
  });

  it('words are whole words: updated_at, deleted, into_x are columns', () => {
    assert.deepEqual(scanQuery('SELECT updated_at, deleted, into_x, "update" FROM t').problems, []);
    assert.deepEqual(scanQuery('(SELECT 1) UNION (SELECT 2)').problems, []);
  });
});

describe('connector definitions: warehouse sources', () => {
  let folder: DefinitionFolder;
  beforeEach(() => (folder = definitionFolder()));
  afterEach(() => folder.remove());

  const load = async (text: string, env: NodeJS.ProcessEnv = ENV) => loadDefinition(folder.write('acme.yaml', text), env);

  it('a minimal definition gets every default; every stream is daily', async () => {
    const { definition, errors } = await load(
      warehouseDefinition('acme', {
        streams: `  customers:
    view: dw_players
    date_column: modified_day
  transactions:
    view: reporting.dw_payments
    date_column: modified_day
  activity:
    view: dw_daily_gaming
    date_column: date`,
      }),
    );
    assert.deepEqual(errors, []);
    assert.deepEqual(definition?.source, {
      type: 'warehouse',
      client: 'postgres',
      url: ENV.TEST_WAREHOUSE_URL,
      statement_timeout_ms: 5 * 60_000,
      days_per_query: 1,
      timezone: 'UTC',
      run_budget_ms: 15 * 60_000,
    } satisfies WarehouseSource);
    assert.deepEqual(definition?.secrets, [ENV.TEST_WAREHOUSE_URL, 'wh-secret-1']);
    const streams = definition?.streams as Partial<Record<Entity, WarehouseStream>>;
    for (const entity of ['customers', 'transactions', 'activity'] as const) {
      assert.deepEqual(streams[entity]?.incremental, { mode: 'daily', late_days: 2, start: '' }, entity);
      assert.equal(streams[entity]?.schedule, '15 0 * * *', entity);
    }
    assert.deepEqual(streams.transactions, {
      entity: 'transactions',
      incremental: { mode: 'daily', late_days: 2, start: '' },
      mapping: { fields: {}, passthrough: true },
      schedule: '15 0 * * *',
      view: 'reporting.dw_payments',
      date_column: 'modified_day',
    } satisfies WarehouseStream);
  });

  it('every setting given', async () => {
    const { definition, errors } = await load(
      warehouseDefinition('acme', {
        source: '  statement_timeout: PT10M\n  days_per_query: 31\n  timezone: America/New_York\n  run_budget: PT2H\n',
        streams: `  customers:
    view: dw_players
    date_column: modified_day
    incremental: { mode: daily, late_days: 0, start: 2026-02-01 }
    mapping: { fields: { customer_id: player_id } }
    schedule: "15 2 * * *"`,
      }),
    );
    assert.deepEqual(errors, []);
    assert.deepEqual(definition?.source, {
      type: 'warehouse',
      client: 'postgres',
      url: ENV.TEST_WAREHOUSE_URL,
      statement_timeout_ms: 600_000,
      days_per_query: 31,
      timezone: 'America/New_York',
      run_budget_ms: 7_200_000,
    });
    assert.deepEqual(definition?.streams.customers, {
      entity: 'customers',
      incremental: { mode: 'daily', late_days: 0, start: '2026-02-01' },
      mapping: { fields: { customer_id: 'player_id' }, passthrough: true },
      schedule: '15 2 * * *',
      view: 'dw_players',
      date_column: 'modified_day',
    });
  });

  const cases: { name: string; text: string; expected: string[] }[] = [
    {
      name: 'source: client, bounds, zone, db-only keys',
      text: warehouseDefinition('acme', { source: '  days_per_query: 0\n  timezone: Nowhere/City\n  page_size: 10\n' }).replace('client: postgres', 'client: bigquery'),
      expected: [
        'source.client (line 5): must be one of postgres, mysql, sqlite, got "bigquery"',
        'source.days_per_query (line 7): must be >= 1, got 0',
        'source.timezone (line 8): unknown time zone "Nowhere/City": use an IANA name such as Europe/Malta, or UTC',
        'source.page_size (line 9): unknown key "page_size"; allowed keys: type, client, url, url_file, statement_timeout, days_per_query, timezone, run_budget',
      ],
    },
    {
      name: 'days_per_query at most 31',
      text: warehouseDefinition('acme', { source: '  days_per_query: 32\n' }),
      expected: ['source.days_per_query (line 7): must be <= 31, got 32'],
    },
    {
      name: 'a literal URL is refused',
      text: warehouseDefinition('acme', { url: '  url: postgres://reader:wh-secret-1@dwh/reporting' }),
      expected: ['source.url (line 6): secret fields take ${ENV_VAR} or url_file, never a literal'],
    },
    {
      name: 'view and date_column are required; no table or query',
      text: warehouseDefinition('acme', {
        streams: `  customers:
    view: dw_players
  transactions:
    query: SELECT * FROM payments
    date_column: modified_day
  activity:
    table: dw_daily_gaming`,
      }),
      expected: [
        'streams.customers.date_column (line 9): is required but missing',
        'streams.transactions.view (line 11): is required but missing',
        'streams.transactions.query (line 11): unknown key "query"; allowed keys: view, date_column, incremental, soft_delete, mapping, schedule',
        'streams.activity.view (line 14): is required but missing',
        'streams.activity.date_column (line 14): is required but missing',
        'streams.activity.table (line 14): unknown key "table"; allowed keys: view, date_column, incremental, mapping, schedule',
      ],
    },
    {
      name: 'identifiers cannot carry SQL',
      text: warehouseDefinition('acme', { streams: '  activity:\n    view: "dw_daily_gaming WHERE 1=1 --"\n    date_column: "date) OR (1=1"' }),
      expected: [
        `streams.activity.view (line 9): ${RELATION_ERROR}, got "dw_daily_gaming WHERE 1=1 --"`,
        `streams.activity.date_column (line 10): ${COLUMN_ERROR}, got "date) OR (1=1"`,
      ],
    },
    {
      name: 'every stream is daily; REST and cursor keys are refused',
      text: warehouseDefinition('acme', {
        streams: `  customers:
    view: dw_players
    date_column: modified_day
    incremental: { mode: cursor, lookback: PT10M, from_param: since }
  activity:
    view: dw_daily_gaming
    date_column: date
    incremental: { date_param: date, late_days: -1 }`,
      }),
      expected: [
        'streams.customers.incremental.lookback (line 11): unknown key "lookback"; allowed keys: mode, late_days, max_day_shrink, start',
        'streams.customers.incremental.mode (line 11): must be daily: a warehouse view is read by whole closed UTC days of its date_column, customers and transactions too, got "cursor"',
        `streams.customers.incremental.from_param (line 11): ${REST_PARAM_ERROR}`,
        'streams.activity.incremental.late_days (line 15): must be >= 0, got -1',
        `streams.activity.incremental.date_param (line 15): ${REST_PARAM_ERROR}`,
      ],
    },
  ];
  for (const { name, text, expected } of cases) {
    it(name, async () => {
      const { definition, errors } = await load(text);
      assert.equal(definition, undefined);
      assert.deepEqual(lines(errors, folder.dir), expected.map((line) => `acme.yaml: ${line}`));
    });
  }
});

describe('connector definitions: the db and warehouse examples', () => {
  const dir = join(packageRoot(), 'config', 'partners');

  it('replica-prop loads clean with REPLICA_PROP_URL set', async () => {
    const { definition, errors } = await loadDefinition(join(dir, 'replica-prop.yaml'), { REPLICA_PROP_URL: 'sqlite:data/replica-prop.sqlite' });
    assert.deepEqual(errors, []);
    assert.ok(definition);
    assert.equal(definition.variant, 'prop-trading');
    assert.deepEqual(definition.source, {
      type: 'db',
      client: 'sqlite',
      url: 'sqlite:data/replica-prop.sqlite',
      page_size: 5000,
      safety_lag_ms: 5_000,
      timezone: 'UTC',
      statement_timeout_ms: 300_000,
      run_budget_ms: 900_000,
    });
    assert.deepEqual(definition.secrets, ['sqlite:data/replica-prop.sqlite']);
    const { customers, transactions, activity } = definition.streams as Partial<Record<Entity, DbStream>>;
    assert.equal(customers?.table, 'accounts');
    assert.deepEqual([customers?.cursor_column, customers?.tiebreak_column], ['updated_at', 'account_id']);
    assert.deepEqual(customers?.incremental, { mode: 'cursor', cursor_field: 'updated_at', lookback_ms: 600_000, start: '' });
    assert.deepEqual(customers?.mapping.fields.phase, { from: 'stage', map: { P1: 'phase_1', P2: 'phase_2', FUNDED: 'funded', BREACHED: 'failed' } });
    assert.match(transactions?.query ?? '', /^SELECT p\.payment_id/);
    assert.deepEqual([transactions?.cursor_column, transactions?.tiebreak_column], ['updated_at', 'payment_id']);
    assert.deepEqual(transactions?.incremental, { mode: 'cursor', cursor_field: 'updated_at', lookback_ms: 600_000, start: '' });
    assert.deepEqual(transactions?.mapping.fields.amount_currency, { from: 'amount_cents', minor_units: 2 });
    assert.match(activity?.query ?? '', /:date_from AND :date_to/);
    assert.deepEqual(activity?.incremental, { mode: 'daily', late_days: 2, start: '' });
    assert.equal(activity?.date_column, undefined);
  });

  it('warehouse-casino loads clean with WAREHOUSE_CASINO_URL set', async () => {
    const { definition, errors } = await loadDefinition(join(dir, 'warehouse-casino.yaml'), { WAREHOUSE_CASINO_URL: 'sqlite:data/warehouse-casino.sqlite' });
    assert.deepEqual(errors, []);
    assert.ok(definition);
    assert.equal(definition.variant, 'igaming');
    assert.deepEqual(definition.source, {
      type: 'warehouse',
      client: 'sqlite',
      url: 'sqlite:data/warehouse-casino.sqlite',
      statement_timeout_ms: 300_000,
      days_per_query: 1,
      timezone: 'UTC',
      run_budget_ms: 900_000,
    });
    const streams = definition.streams as Partial<Record<Entity, WarehouseStream>>;
    assert.deepEqual(
      (['customers', 'transactions', 'activity'] as const).map((e) => [streams[e]?.view, streams[e]?.date_column, streams[e]?.incremental.mode]),
      [
        ['dw_players', 'modified_day', 'daily'],
        ['dw_payments', 'modified_day', 'daily'],
        ['dw_daily_gaming', 'date', 'daily'],
      ],
    );
  });

  it('a real replica URL in the environment, with client changed to mysql, loads too', async () => {
    const { readFileSync } = await import('node:fs');
    const folder = definitionFolder();
    try {
      const text = readFileSync(join(dir, 'replica-prop.yaml'), 'utf8').replace(/^ {2}client: sqlite/m, '  client: mysql');
      const { definition, errors } = await loadDefinition(folder.write('replica-prop.yaml', text), { REPLICA_PROP_URL: ENV.TEST_DB_URL });
      assert.deepEqual(errors, []);
      assert.deepEqual(definition?.secrets, [ENV.TEST_DB_URL, encodeURIComponent(PASSWORD), PASSWORD]);
    } finally {
      folder.remove();
    }
  });
});
