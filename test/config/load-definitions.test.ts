import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { definitionSchemaFile } from '../../src/config/definition-schema.js';
import { formatDefinitionError, loadDefinition, loadDefinitions } from '../../src/config/load-definitions.js';
import { DEFINITION_DEFAULTS } from '../../src/config/definition-defaults.js';
import { durationMs } from '../../src/config/definition-problems.js';
import type { DefinitionError } from '../../src/config/load-definitions.js';
import type { RestSource, RestStream } from '../../src/config/definition.js';
import type { Entity } from '../../src/types.js';
import { packageRoot } from '../../src/paths.js';
import { definitionFolder, minimalDefinition } from './fixtures.js';
import type { DefinitionFolder } from './fixtures.js';

const ENV = { TEST_SECRET: 'test-secret-value-1' };
/** What the example definitions read from the environment. */
const EXAMPLES_ENV = {
  SANDBOX_CLIENT_SECRET: 'sandbox-secret-42',
  REPLICA_PROP_URL: 'sqlite:data/replica-prop.sqlite',
  WAREHOUSE_CASINO_URL: 'sqlite:data/warehouse-casino.sqlite',
};

/** The errors of one file, formatted, with the folder removed from the file name. */
const lines = (errors: DefinitionError[], dir: string): string[] => errors.map((e) => formatDefinitionError({ ...e, file: e.file.slice(dir.length + 1) }));

describe('connector definitions: the examples', () => {
  it('every example loads clean with its environment variables set', async () => {
    const dir = join(packageRoot(), 'config', 'partners');
    const { definitions, errors } = await loadDefinitions(dir, EXAMPLES_ENV);
    assert.deepEqual(errors, []);
    assert.deepEqual(
      definitions.map((d) => [d.partner, d.variant, d.source.type]),
      [
        ['replica-prop', 'prop-trading', 'db'],
        ['sandbox-casino', 'igaming', 'rest'],
        ['sandbox-prop', 'prop-trading', 'rest'],
        ['warehouse-casino', 'igaming', 'warehouse'],
      ],
    );
  });

  it('sandbox-casino and sandbox-prop load clean with SANDBOX_CLIENT_SECRET set', async () => {
    const dir = join(packageRoot(), 'config', 'partners');
    const { definitions: all } = await loadDefinitions(dir, EXAMPLES_ENV);
    const definitions = all.filter((d) => d.partner.startsWith('sandbox-'));
    assert.equal(definitions.length, 2);
    for (const def of definitions) {
      const segment = def.variant;
      assert.equal((def.source as RestSource).base_url, 'http://127.0.0.1:4010');
      assert.deepEqual((def.source as RestSource).auth, { type: 'oauth2_client_credentials', token_url: '/oauth/token', client_id: 'sandbox-client', client_secret: 'sandbox-secret-42' });
      assert.deepEqual(def.secrets, ['sandbox-secret-42']);
      assert.equal((def.source as RestSource).requests_per_minute, 1000);
      assert.equal((def.source as RestSource).timeout_ms, 30_000);
      assert.deepEqual((def.source as RestSource).retries, { max: 5, min_delay_ms: 500, max_delay_ms: 30_000, max_retry_after_ms: 120_000 });
      assert.equal((def.source as RestSource).run_budget_ms, 15 * 60_000);
      const { customers, transactions, activity } = def.streams as Partial<Record<Entity, RestStream>>;
      assert.equal(customers?.path, `/api/v1/${segment}/customers`);
      assert.deepEqual(customers?.pagination, { type: 'cursor', per_page: 500, per_page_param: 'per_page', cursor_param: 'cursor', cursor_path: 'meta.next_cursor' });
      assert.deepEqual(customers?.incremental, {
        mode: 'cursor',
        cursor_field: 'last_modified_date',
        from_param: 'modified_since',
        to_param: 'modified_until',
        lookback_ms: 10 * 60_000,
        start: '',
      });
      assert.equal(transactions?.path, `/api/v1/${segment}/transactions`);
      assert.deepEqual(transactions?.incremental, {
        mode: 'cursor',
        cursor_field: 'updated_at',
        from_param: 'updated_since',
        to_param: 'updated_until',
        lookback_ms: 10 * 60_000, // a change field needs only a short overlap
        start: '',
      });
      assert.equal(activity?.path, `/api/v1/${segment}/activity`);
      assert.deepEqual(activity?.incremental, { mode: 'daily', date_param: 'date', late_days: 2, start: '' });
      assert.equal(customers?.schedule, '*/4 * * * *');
      assert.equal(activity?.schedule, '15 0 * * *');
      assert.deepEqual(def.affiliates, { map: {}, unmapped: 'keep' });
    }
  });

  it('without their variables they name them', async () => {
    const dir = join(packageRoot(), 'config', 'partners');
    const { definitions, errors } = await loadDefinitions(dir, {});
    assert.equal(definitions.length, 0);
    assert.deepEqual(
      errors.map((e) => [e.file.slice(dir.length + 1), e.path, e.message]),
      [
        ['replica-prop.yaml', 'source.url', 'environment variable REPLICA_PROP_URL is not set'],
        ['sandbox-casino.yaml', 'source.auth.client_secret', 'environment variable SANDBOX_CLIENT_SECRET is not set'],
        ['sandbox-prop.yaml', 'source.auth.client_secret', 'environment variable SANDBOX_CLIENT_SECRET is not set'],
        ['warehouse-casino.yaml', 'source.url', 'environment variable WAREHOUSE_CASINO_URL is not set'],
      ],
    );
  });
});

describe('connector definitions: defaults', () => {
  let folder: DefinitionFolder;
  beforeEach(() => (folder = definitionFolder()));
  afterEach(() => folder.remove());

  it('a minimal definition gets every default', async () => {
    const file = folder.write('acme.yaml', minimalDefinition('acme', { streams: `  customers:
    path: /c
    incremental: { cursor_field: last_modified_date, from_param: since }
  transactions:
    path: /t
    incremental: { cursor_field: updated_at, from_param: since, start: 2026-01-01T00:00:00Z }
  activity:
    path: /a` }));
    const { definition, errors } = await loadDefinition(file, ENV);
    assert.deepEqual(errors, []);
    assert.ok(definition);
    assert.equal(definition.file, file);
    assert.deepEqual(definition.streams.customers, {
      entity: 'customers',
      path: '/c',
      records_path: 'data',
      params: {},
      pagination: { type: 'page', per_page: 100, page_param: 'page', per_page_param: 'per_page', first_page: 1 },
      incremental: { mode: 'cursor', cursor_field: 'last_modified_date', from_param: 'since', lookback_ms: 600_000, start: '' },
      mapping: { fields: {}, passthrough: true },
      schedule: '*/4 * * * *',
    });
    assert.equal(definition.streams.transactions?.incremental.start, '2026-01-01T00:00:00Z');
    assert.deepEqual(definition.streams.transactions?.incremental, {
      mode: 'cursor',
      cursor_field: 'updated_at',
      from_param: 'since',
      lookback_ms: 3 * 86_400_000,
      start: '2026-01-01T00:00:00Z',
    });
    assert.deepEqual(definition.streams.activity?.incremental, { mode: 'daily', date_param: 'date', late_days: 2, start: '' });
    assert.equal(definition.streams.activity?.schedule, '15 0 * * *');
  });

  it('api_key and bearer auth, offset pagination, params and affiliates', async () => {
    const file = folder.write(
      'beta.yaml',
      minimalDefinition('beta', {
        auth: '    type: api_key\n    key: ${TEST_SECRET}',
        streams: `  customers:
    path: /c
    params: { status: all, limit: 5, active: true }
    pagination: { type: offset, per_page: 250 }
    incremental: { cursor_field: changed, from_param: since, to_param: until, lookback: PT1H30M }`,
        extra: 'affiliates:\n  map: { AFF-1: affiliate-1, 77: affiliate-77 }\n  unmapped: reject\n',
      }),
    );
    const { definition, errors } = await loadDefinition(file, ENV);
    assert.deepEqual(errors, []);
    assert.deepEqual((definition?.source as RestSource | undefined)?.auth, { type: 'api_key', header: 'X-API-Key', key: 'test-secret-value-1' });
    assert.deepEqual((definition?.streams.customers as RestStream | undefined)?.params, { status: 'all', limit: '5', active: 'true' });
    assert.deepEqual((definition?.streams.customers as RestStream | undefined)?.pagination, { type: 'offset', per_page: 250, offset_param: 'offset', limit_param: 'limit' });
    assert.equal(definition?.streams.customers?.incremental.mode === 'cursor' && definition.streams.customers.incremental.lookback_ms, 90 * 60_000);
    assert.deepEqual(definition?.affiliates, { map: { 'AFF-1': 'affiliate-1', '77': 'affiliate-77' }, unmapped: 'reject' });

    const bearer = folder.write('gamma.yaml', minimalDefinition('gamma', { auth: '    type: bearer\n    token: Bearer-${TEST_SECRET}' }));
    const loaded = await loadDefinition(bearer, ENV);
    assert.deepEqual((loaded.definition?.source as RestSource | undefined)?.auth, { type: 'bearer', token: 'Bearer-test-secret-value-1' });
    assert.deepEqual(loaded.definition?.secrets.sort(), ['Bearer-test-secret-value-1', 'test-secret-value-1']);
  });

  it('the schema states the same defaults as the loader', () => {
    const schema = JSON.parse(readFileSync(definitionSchemaFile(), 'utf8')) as Record<string, unknown>;
    const at = (pointer: string): unknown => {
      let node: unknown = schema;
      for (const part of pointer.split('/').filter((p) => p !== '')) node = (node as Record<string, unknown>)[part];
      return (node as Record<string, unknown>).default;
    };
    const d = DEFINITION_DEFAULTS;
    const expected: [string, unknown][] = [
      ['$defs/restSource/properties/rate_limit/properties/requests_per_minute', d.requests_per_minute],
      ['$defs/restSource/properties/timeout', d.timeout],
      ['$defs/restSource/properties/retries/properties/max', d.retries.max],
      ['$defs/restSource/properties/retries/properties/min_delay', d.retries.min_delay],
      ['$defs/restSource/properties/retries/properties/max_delay', d.retries.max_delay],
      ['$defs/restSource/properties/retries/properties/max_retry_after', d.retries.max_retry_after],
      ['$defs/restSource/properties/run_budget', d.run_budget],
      ['$defs/oauth2Auth/properties/token_url', d.token_url],
      ['$defs/apiKeyAuth/properties/header', d.api_key_header],
      ['$defs/recordsPath', d.records_path],
      ['$defs/perPage', d.per_page],
      ['$defs/pagePagination/properties/page_param', d.page.page_param],
      ['$defs/pagePagination/properties/per_page_param', d.page.per_page_param],
      ['$defs/pagePagination/properties/first_page', d.page.first_page],
      ['$defs/cursorPagination/properties/per_page_param', d.cursor.per_page_param],
      ['$defs/cursorPagination/properties/cursor_param', d.cursor.cursor_param],
      ['$defs/cursorPagination/properties/cursor_path', d.cursor.cursor_path],
      ['$defs/offsetPagination/properties/offset_param', d.offset.offset_param],
      ['$defs/offsetPagination/properties/limit_param', d.offset.limit_param],
      ['$defs/customersIncremental/properties/lookback', d.lookback.customers],
      ['$defs/transactionsIncremental/properties/lookback', d.lookback.transactions],
      ['$defs/dailyIncremental/properties/date_param', d.daily.date_param],
      ['$defs/dailyIncremental/properties/late_days', d.daily.late_days],
      ['$defs/customersStream/properties/schedule', d.schedule.customers],
      ['$defs/transactionsStream/properties/schedule', d.schedule.transactions],
      ['$defs/activityStream/properties/schedule', d.schedule.activity],
      ['$defs/mapping/properties/passthrough', d.passthrough],
      ['properties/affiliates/properties/unmapped', d.unmapped],
      ['$defs/dbSource/properties/page_size', d.db.page_size],
      ['$defs/dbSource/properties/safety_lag', d.db.safety_lag],
      ['$defs/dbSource/properties/timezone', d.db.timezone],
      ['$defs/dbSource/properties/statement_timeout', d.db.statement_timeout],
      ['$defs/dbSource/properties/run_budget', d.db.run_budget],
      ['$defs/dbCustomersIncremental/properties/lookback', d.db.lookback.customers],
      ['$defs/dbTransactionsIncremental/properties/lookback', d.db.lookback.transactions],
      ['$defs/dbDailyIncremental/properties/late_days', d.db.late_days],
      ['$defs/dbCustomersStream/properties/schedule', d.schedule.customers],
      ['$defs/dbTransactionsStream/properties/schedule', d.schedule.transactions],
      ['$defs/dbActivityStream/properties/schedule', d.schedule.activity],
      ['$defs/warehouseSource/properties/statement_timeout', d.warehouse.statement_timeout],
      ['$defs/warehouseSource/properties/days_per_query', d.warehouse.days_per_query],
      ['$defs/warehouseSource/properties/timezone', d.warehouse.timezone],
      ['$defs/warehouseSource/properties/run_budget', d.warehouse.run_budget],
      ['$defs/warehouseIncremental/properties/late_days', d.warehouse.late_days],
      ['$defs/warehouseCustomersStream/properties/schedule', d.warehouse.schedule],
      ['$defs/warehouseTransactionsStream/properties/schedule', d.warehouse.schedule],
      ['$defs/warehouseActivityStream/properties/schedule', d.warehouse.schedule],
    ];
    for (const [pointer, value] of expected) assert.deepEqual(at(pointer), value, pointer);
  });

  it('durations: days, hours, minutes, seconds; nothing else', () => {
    assert.equal(durationMs('PT10M'), 600_000);
    assert.equal(durationMs('P3D'), 259_200_000);
    assert.equal(durationMs('PT0.5S'), 500);
    assert.equal(durationMs('P1DT12H'), 129_600_000);
    for (const bad of ['P1M', 'P1Y', 'P', 'PT', '10M', 'P1DT', 'P1W']) assert.equal(durationMs(bad), undefined, bad);
  });
});

describe('connector definitions: errors', () => {
  let folder: DefinitionFolder;
  beforeEach(() => (folder = definitionFolder()));
  afterEach(() => folder.remove());

  it('reports every error of every file, with file, path, line and message', async () => {
    folder.write(
      'acme.yaml',
      `partner: acme
variant: igaming
source:
  type: rest
  base_url: http://partner.example.com
  auth:
    type: oauth2_client_credentials
    client_id: client-1
    client_secret: \${TEST_SECRET}
streams:
  customers:
    path: /c
    pagination:
      per_page: 1000
      type: cursor
      per_pge: 10
    incremental:
      mode: daily
      cursor_field: x
    schedule: "61 * * * *"
`,
    );
    folder.write('beta.yml', 'partner: beta\nvariant: casino\nsource:\n  type: ftp\nstreams: {}\n');
    folder.write('gamma.yaml', 'partner: gamma\n  bad: [\n');
    folder.write('README.md', '# not a definition\n');
    folder.write('notes.txt', 'partner: nope\n');

    const { definitions, errors } = await loadDefinitions(folder.dir, ENV);
    assert.equal(definitions.length, 0);
    assert.deepEqual(lines(errors, folder.dir), [
      'acme.yaml: source.base_url (line 5): must use https:// (plain http is allowed only for localhost / 127.0.0.1 / ::1), got http://partner.example.com',
      'acme.yaml: streams.customers.pagination.per_page (line 14): must be <= 500 (spec §4), got 1000',
      'acme.yaml: streams.customers.pagination.per_pge (line 16): unknown key "per_pge" (did you mean per_page?); allowed keys: type, per_page, per_page_param, cursor_param, cursor_path',
      'acme.yaml: streams.customers.incremental.from_param (line 18): is required but missing',
      'acme.yaml: streams.customers.incremental.mode (line 18): must be cursor: customers and transactions are pulled by a source change field; only activity is daily, got "daily"',
      'acme.yaml: streams.customers.schedule (line 20): not a valid cron expression (5 or 6 fields, UTC): 61 is a invalid expression for minute',
      'beta.yml: variant (line 2): must be one of igaming, prop-trading, got "casino"',
      'beta.yml: source.type (line 4): must be one of rest, db, warehouse, got "ftp"',
      'beta.yml: streams (line 5): must define at least one stream: customers, transactions or activity',
      'gamma.yaml: (file) (line 1): YAML syntax: Nested mappings are not allowed in compact mappings',
      'gamma.yaml: (file) (line 1): YAML syntax: Implicit keys need to be on a single line',
      'gamma.yaml: (file) (line 3): YAML syntax: Flow sequence in block collection must be sufficiently indented and end with a ]',
    ]);
    const perPage = errors.find((e) => e.path === 'streams.customers.pagination.per_page');
    assert.deepEqual(perPage && { line: perPage.line, column: perPage.column }, { line: 14, column: 17 });
  });

  it('valid files load while others fail', async () => {
    folder.write('good.yaml', minimalDefinition('good'));
    folder.write('bad.yaml', minimalDefinition('bad', { variant: 'sportsbook' }));
    const { definitions, errors } = await loadDefinitions(folder.dir, ENV);
    assert.deepEqual(
      definitions.map((d) => d.partner),
      ['good'],
    );
    assert.deepEqual(lines(errors, folder.dir), ['bad.yaml: variant (line 2): must be one of igaming, prop-trading, got "sportsbook"']);
  });

  const cases: { name: string; text: string; expected: string[] }[] = [
    {
      name: 'partner id must equal the file name',
      text: minimalDefinition('acme-2'),
      expected: ['partner (line 1): must equal the file\'s base name "acme", got "acme-2" (rename the file or the id)'],
    },
    {
      name: 'partner id pattern',
      text: minimalDefinition('Acme'),
      expected: [
        'partner (line 1): must be a lower-case partner id: a letter or digit, then up to 62 letters, digits, _ or - (e.g. acme-casino), got "Acme"',
        'partner (line 1): must equal the file\'s base name "acme", got "Acme" (rename the file or the id)',
      ],
    },
    {
      name: 'missing top-level keys',
      text: 'partner: acme\n',
      expected: ['variant (line 1): is required but missing', 'source (line 1): is required but missing', 'streams (line 1): is required but missing'],
    },
    {
      name: 'unknown top-level key',
      text: minimalDefinition('acme', { extra: 'schedules: {}\n' }),
      expected: ['schedules (line 16): unknown key "schedules"; allowed keys: partner, variant, source, streams, affiliates, personal_data, max_reject_ratio, reconcile, delete_guard'],
    },
    {
      name: 'auth type unknown',
      text: minimalDefinition('acme', { auth: '    type: basic\n    user: x' }),
      expected: ['source.auth.type (line 7): must be one of oauth2_client_credentials, bearer, api_key, got "basic"'],
    },
    {
      name: 'auth type missing',
      text: minimalDefinition('acme', { auth: '    client_id: x' }),
      expected: ['source.auth.type (line 7): is required but missing; one of oauth2_client_credentials, bearer, api_key'],
    },
    {
      name: 'secret and its file both given',
      text: minimalDefinition('acme', { auth: '    type: bearer\n    token: ${TEST_SECRET}\n    token_file: token.txt' }),
      expected: ['source.auth (line 7): needs exactly one of token (a ${ENV_VAR} reference) or token_file'],
    },
    {
      name: 'no secret at all',
      text: minimalDefinition('acme', { auth: '    type: oauth2_client_credentials\n    client_id: x' }),
      expected: ['source.auth (line 7): needs exactly one of client_secret (a ${ENV_VAR} reference) or client_secret_file'],
    },
    {
      name: 'a literal secret',
      text: minimalDefinition('acme', { auth: '    type: api_key\n    key: hunter2-literal' }),
      expected: ['source.auth.key (line 8): secret fields take ${ENV_VAR} or key_file, never a literal'],
    },
    {
      name: 'a secret of the wrong type is not shown',
      text: minimalDefinition('acme', { auth: '    type: api_key\n    key: 123456789' }),
      expected: ['source.auth.key (line 8): must be a string'],
    },
    {
      name: 'wrong types and bounds',
      text: minimalDefinition('acme', {
        extra: '',
        streams: `  customers:
    path: /c
    records_path: 5
    pagination: { type: page, per_page: 0, first_page: -1 }
    incremental: { cursor_field: x, from_param: since, lookback: 10 minutes }`,
      }).replace('  type: rest\n', '  type: rest\n  rate_limit: { requests_per_minute: 1001 }\n  retries: { max: many }\n'),
      expected: [
        'source.rate_limit.requests_per_minute (line 5): must be <= 1000 (spec §8), got 1001',
        'source.retries.max (line 6): must be a whole number, got "many"',
        'streams.customers.records_path (line 15): must be a string, got 5',
        'streams.customers.pagination.per_page (line 16): must be >= 1 (spec §4), got 0',
        'streams.customers.pagination.first_page (line 16): must be >= 0, got -1',
        'streams.customers.incremental.lookback (line 17): must be an ISO 8601 duration of days, hours, minutes and seconds, e.g. PT30S, PT10M, P3D, P1DT12H, got "10 minutes"',
      ],
    },
    {
      name: 'activity must be daily; a bad start',
      text: minimalDefinition('acme', {
        streams: `  activity:
    path: /a
    incremental: { mode: cursor, start: 01/05/2026 }
  transactions:
    path: /t
    incremental: { cursor_field: updated_at, from_param: since, start: yesterday }`,
      }),
      expected: [
        'streams.activity.incremental.mode (line 13): must be daily: activity is pulled by whole UTC days, got "cursor"',
        'streams.activity.incremental.start (line 13): must be a date YYYY-MM-DD, got "01/05/2026"',
        'streams.transactions.incremental.start (line 16): must be an ISO 8601 date-time with a zone (2024-05-01T00:00:00Z) or a date (2024-05-01, midnight UTC), got "yesterday"',
      ],
    },
    {
      name: 'a start that is ISO 8601 but not RFC 3339, or a leap second, is refused as a record field would be',
      text: minimalDefinition('acme', {
        streams: `  customers:
    path: /c
    incremental: { cursor_field: updated_at, from_param: since, start: '2026-01-01T00:00:00+01' }
  transactions:
    path: /t
    incremental: { cursor_field: updated_at, from_param: since, start: '2016-12-31T23:59:60Z' }`,
      }),
      expected: [
        'streams.customers.incremental.start (line 13): must be an ISO 8601 date-time with a zone (2024-05-01T00:00:00Z) or a date (2024-05-01, midnight UTC), got "2026-01-01T00:00:00+01"',
        'streams.transactions.incremental.start (line 16): must be an ISO 8601 date-time with a zone (2024-05-01T00:00:00Z) or a date (2024-05-01, midnight UTC), got "2016-12-31T23:59:60Z"',
      ],
    },
    {
      name: 'unknown stream, path form, empty streams of one kind',
      text: minimalDefinition('acme', { streams: '  players:\n    path: /p\n  customers:\n    path: api/customers\n    incremental: { cursor_field: x, from_param: y }' }),
      expected: [
        'streams.players (line 11): unknown key "players"; allowed keys: customers, transactions, activity',
        'streams.customers.path (line 14): must be a path starting with /, e.g. /api/v1/igaming/customers, got "api/customers"',
      ],
    },
    {
      name: 'insecure or malformed URLs',
      text: minimalDefinition('acme', { auth: '    type: oauth2_client_credentials\n    token_url: http://auth.partner.example/token\n    client_id: x\n    client_secret: ${TEST_SECRET}' }).replace(
        'https://api.partner.example',
        'not a url',
      ),
      expected: [
        'source.base_url (line 5): not a valid URL: "not a url"',
        'source.auth.token_url (line 8): must use https:// (plain http is allowed only for localhost / 127.0.0.1 / ::1), got http://auth.partner.example',
      ],
    },
    {
      name: 'retries: min_delay longer than max_delay',
      text: minimalDefinition('acme').replace('  type: rest\n', '  type: rest\n  retries: { min_delay: PT1M, max_delay: PT30S }\n'),
      expected: ['source.retries.min_delay (line 5): must not be longer than max_delay (PT30S)'],
    },
    {
      name: 'cron: wrong field count',
      text: minimalDefinition('acme', { streams: '  activity:\n    path: /a\n    schedule: "0 6 * *"' }),
      expected: ['streams.activity.schedule (line 13): not a valid cron expression (5 or 6 fields, UTC): expected 5 or 6 fields but got 4'],
    },
    {
      name: 'mapping: targets, rule kinds, zones and formats',
      text: minimalDefinition('acme', {
        streams: `  customers:
    path: /c
    incremental: { cursor_field: x, from_param: y }
    mapping:
      fields:
        signup: created
        signup_date: { from: c, datetime: { format: hello, zone: Mars/Base } }
        email: { minor_units: 2 }
        affiliate_id: { number: true }
        customer_id: { const: x, from: y }
        last_modified_date: { datetime: { format: unix_seconds }, extra: 1 }
        country_code: 7
        phase: stage`,
      }),
      expected: [
        'streams.customers.mapping.fields.signup (line 16): "signup" is not a spec field of igaming customers; spec fields: customer_id, signup_date, affiliate_id, last_modified_date, campaign_id, click_id, lang_id, country_code, kyc_status_id, sales_status_id, first_name, last_name, email',
        'streams.customers.mapping.fields.signup_date.datetime.zone (line 17): unknown time zone "Mars/Base": use an IANA name such as Europe/Malta, or UTC',
        'streams.customers.mapping.fields.signup_date.datetime.format (line 17): format "hello" does not read a full date (year, month, day): use iso, sql, rfc2822, http, unix_seconds, unix_millis or a luxon format such as dd/MM/yyyy HH:mm',
        'streams.customers.mapping.fields.email.minor_units (line 18): minor_units applies to number fields; email is a string field',
        'streams.customers.mapping.fields.affiliate_id.number (line 19): number applies to number fields; affiliate_id is a string field',
        'streams.customers.mapping.fields.customer_id.const (line 20): const is a fixed value: it cannot be combined with from',
        'streams.customers.mapping.fields.last_modified_date.extra (line 21): unknown key "extra"; allowed keys: from, const, default, map, case, number, minor_units, multiply, datetime',
        'streams.customers.mapping.fields.country_code (line 22): must be a string or a mapping (key: value), got 7',
        'streams.customers.mapping.fields.phase (line 23): "phase" is not a spec field of igaming customers; spec fields: customer_id, signup_date, affiliate_id, last_modified_date, campaign_id, click_id, lang_id, country_code, kyc_status_id, sales_status_id, first_name, last_name, email',
      ],
    },
    {
      name: 'mapping: datetime on a non-date field',
      text: minimalDefinition('acme', {
        variant: 'prop-trading',
        streams: `  transactions:
    path: /t
    incremental: { cursor_field: x, from_param: y }
    mapping:
      fields:
        status: { datetime: {} }
        amount_currency: { from: cents, minor_units: 2 }`,
      }),
      expected: ['streams.transactions.mapping.fields.status.datetime (line 16): datetime applies to date-time and date fields; status is a string field'],
    },
    {
      name: 'mapping: multiply factors',
      text: minimalDefinition('acme', {
        variant: 'prop-trading',
        streams: `  customers:
    path: /c
    incremental: { cursor_field: x, from_param: y }
    mapping:
      fields:
        account_size: { from: size_k, multiply: 0 }
        customer_id: { from: id, multiply: 1000 }
        signup_date: { multiply: [1] }
        affiliate_id: { const: a, multiply: "2" }
  transactions:
    path: /t
    incremental: { cursor_field: x, from_param: y }
    mapping:
      fields:
        amount_currency: { from: a, multiply: thousand }
        amount_usd: { from: u, multiply: 1e20 }`,
      }),
      expected: [
        'streams.customers.mapping.fields.account_size.multiply (line 16): the factor must be a non-zero decimal number such as 1000 or 0.01: multiplying by 0 would erase the value',
        'streams.customers.mapping.fields.customer_id.multiply (line 17): multiply applies to number fields; customer_id is a string field',
        'streams.customers.mapping.fields.signup_date.multiply (line 18): must be a number or a string, got a list',
        'streams.customers.mapping.fields.signup_date.multiply (line 18): multiply applies to number fields; signup_date is a date-time field',
        'streams.customers.mapping.fields.affiliate_id.const (line 19): const is a fixed value: it cannot be combined with multiply',
        'streams.customers.mapping.fields.affiliate_id.multiply (line 19): multiply applies to number fields; affiliate_id is a string field',
        'streams.transactions.mapping.fields.amount_currency.multiply (line 25): the factor must be a non-zero decimal number such as 1000 or 0.01, got "thousand"',
        'streams.transactions.mapping.fields.amount_usd.multiply (line 26): the factor must be a non-zero decimal number such as 1000 or 0.01 within 1e-15 and 1e15, got 100000000000000000000',
      ],
    },
    {
      name: 'mapping: case',
      text: minimalDefinition('acme', {
        streams: `  customers:
    path: /c
    incremental: { cursor_field: x, from_param: y }
    mapping:
      fields:
        country_code: { from: country, case: upper }
        lang_id: { from: lang, case: title }
        signup_date: { from: created, case: lower }
        customer_id: { const: X, case: lower }`,
      }),
      expected: [
        'streams.customers.mapping.fields.lang_id.case (line 17): must be one of upper, lower, got "title"',
        'streams.customers.mapping.fields.signup_date.case (line 18): case applies to text fields; signup_date is a date-time field',
        'streams.customers.mapping.fields.customer_id.const (line 19): const is a fixed value: it cannot be combined with case',
      ],
    },
    {
      name: 'affiliates',
      text: minimalDefinition('acme', { extra: 'affiliates:\n  map: { A1: "" }\n  unmapped: maybe\n' }),
      expected: ['affiliates.map.A1 (line 17): must not be empty', 'affiliates.unmapped (line 18): must be one of keep, reject, got "maybe"'],
    },
    {
      name: 'a duplicate key is a YAML error',
      text: minimalDefinition('acme') + 'variant: prop-trading\n',
      expected: ['(file) (line 16): YAML syntax: Map keys must be unique'],
    },
    {
      name: 'a document that is not a mapping',
      text: '- partner: acme\n',
      expected: ['(file) (line 1): must be a mapping with the keys partner, variant, source and streams'],
    },
    {
      name: 'an empty file',
      text: '# nothing yet\n',
      expected: ['(file) (line 1): must be a mapping with the keys partner, variant, source and streams'],
    },
  ];
  for (const { name, text, expected } of cases) {
    it(name, async () => {
      const file = folder.write('acme.yaml', text);
      const { definition, errors } = await loadDefinition(file, ENV);
      assert.equal(definition, undefined);
      assert.deepEqual(lines(errors, folder.dir), expected.map((line) => `acme.yaml: ${line}`));
    });
  }

  it('one partner in two files', async () => {
    folder.write('acme.yaml', minimalDefinition('acme'));
    folder.write('acme.yml', minimalDefinition('acme'));
    const { definitions, errors } = await loadDefinitions(folder.dir, ENV);
    assert.deepEqual(
      definitions.map((d) => d.file.slice(folder.dir.length + 1)),
      ['acme.yaml'],
    );
    assert.deepEqual(lines(errors, folder.dir), ['acme.yml: (file): partner acme is also defined in ' + join(folder.dir, 'acme.yaml') + ': one file per partner']);
  });

  it('a folder that does not exist', async () => {
    const missing = join(folder.dir, 'nope');
    const { definitions, errors } = await loadDefinitions(missing, ENV);
    assert.equal(definitions.length, 0);
    assert.deepEqual(errors, [{ file: missing, path: '', message: 'cannot read the definitions folder: ENOENT' }]);
  });
});
