/**
 * What discover recognises in values and what init proposes from it, without a source: formats
 * (ISO with and without offset, dd/MM/yyyy HH:mm, epoch seconds and milliseconds, decimal strings),
 * minor units by name and by values, low-cardinality codes, and the draft's rules and TODOs.
 */
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import type { Discovery, TableDiscovery } from '../../src/onboarding/discovery.js';
import { profileRecords, valueFormat } from '../../src/onboarding/profile.js';
import { proposeDefinition } from '../../src/onboarding/propose.js';
import type { RestOptions } from '../../src/onboarding/source-options.js';

describe('discover: value formats', () => {
  it('recognises date-time, epoch, decimal and code formats', () => {
    assert.equal(valueFormat('2026-11-02T10:00:00Z'), 'iso-datetime-offset');
    assert.equal(valueFormat('2026-11-02T10:00:00.123+01:00'), 'iso-datetime-offset');
    assert.equal(valueFormat('2026-11-02T10:00:00'), 'iso-datetime-local');
    assert.equal(valueFormat('2026-11-02 10:00:00.5'), 'sql-datetime');
    assert.equal(valueFormat('02/11/2026 10:00'), 'dd/MM/yyyy HH:mm');
    assert.equal(valueFormat(1793613600), 'epoch-seconds');
    assert.equal(valueFormat(1793613600123), 'epoch-millis');
    assert.equal(valueFormat('12.50'), 'decimal-string');
    assert.equal(valueFormat(12.5), 'decimal');
    assert.equal(valueFormat('2026-11-02'), 'date');
  });

  it('profiles nulls, absences, distinct values and minor units by name and by values', () => {
    const fields = profileRecords([
      { id: 1, amount: 1999, fee_cents: 50, lotsX100: 150, state: 'A', note: null, player: { id: 7 } },
      { id: 2, amount: 2500, fee_cents: 75, state: 'B' },
      { id: 3, amount: 100, fee_cents: 0, state: 'A', note: 'x', player: { id: 8 } },
    ]);
    const f = (name: string) => fields.find((x) => x.name === name);
    assert.deepEqual(f('state')?.distinct, ['A', 'B']);
    assert.equal(f('id')?.distinct, undefined, 'all values distinct: not a code');
    assert.deepEqual([f('note')?.nulls, f('note')?.absent, f('note')?.present], [1, 1, 1]);
    assert.match(f('fee_cents')?.minor_units?.reason ?? '', /the name fee_cents says minor units/);
    assert.match(f('amount')?.minor_units?.reason ?? '', /3 values are all whole numbers/);
    assert.match(f('lotsX100')?.minor_units?.reason ?? '', /the name lotsX100 says minor units/);
    assert.equal(f('player.id')?.format, 'integer');
  });
});

describe('init: the proposed draft', () => {
  const options: RestOptions = { kind: 'rest', baseUrl: 'https://api.partner.example', auth: 'bearer', authEnv: 'PARTNER_TOKEN', paths: { transactions: '/v2/payments' }, dateParam: 'date' };
  const discovery = (records: Record<string, unknown>[]): Discovery => ({
    kind: 'rest',
    base_url: options.baseUrl,
    entities: [{ entity: 'transactions', where: '/v2/payments', records: records.length, pages: 1, records_path: 'items', pagination: { type: 'cursor', cursor_path: 'paging.next', cursor_param: 'after', per_page_param: 'limit' }, fields: profileRecords(records), references: [], notes: [] }],
  });

  it('maps by name, format and obvious codes, and leaves a TODO with the values where a code is not obvious', () => {
    const draft = proposeDefinition('acme', 'igaming', options, discovery([
      { user_id: 'u1', paymentId: 'p1', kind: 'deposit', amount: 1000, ccy: 'EUR', paid: '01/11/2026 10:00', state: 'S', changed_at: '2026-11-01T10:00:00Z' },
      { user_id: 'u2', paymentId: 'p2', kind: 'withdraw', amount: 250, ccy: 'EUR', paid: '02/11/2026 11:30', state: 'F', changed_at: '2026-11-02T11:30:00Z' },
      { user_id: 'u3', paymentId: 'p3', kind: 'deposit', amount: 75, ccy: 'EUR', paid: '02/11/2026 12:00', state: 'S', changed_at: '2026-11-02T12:00:00Z' },
    ]));
    const def = parse(draft.yaml) as { source: { auth: Record<string, string> }; streams: { transactions: Record<string, unknown> & { mapping: { fields: Record<string, unknown> }; incremental: Record<string, unknown> } } };
    assert.deepEqual(def.source.auth, { type: 'bearer', token: '${PARTNER_TOKEN}' });
    const t = def.streams.transactions;
    assert.equal(t.records_path, 'items');
    assert.deepEqual(t.pagination, { type: 'cursor', per_page: 500, per_page_param: 'limit', cursor_param: 'after', cursor_path: 'paging.next' });
    assert.equal(t.incremental.cursor_field, 'changed_at');
    assert.deepEqual(t.mapping.fields, {
      transaction_id: 'paymentId',
      customer_id: 'user_id',
      transaction_type: { from: 'kind', map: { deposit: 'deposit', withdraw: 'withdrawal' } },
      amount_currency: { from: 'amount', minor_units: 2 },
      currency: 'ccy',
      transaction_date: { from: 'paid', datetime: { format: 'dd/MM/yyyy HH:mm', zone: 'UTC' } },
      status: 'state',
    });
    assert.ok(draft.todos.some((t) => /transactions\.status: the codes of state are not obvious: "F", "S"/.test(t)), draft.todos.join('\n'));
    assert.ok(draft.todos.some((t) => /transactions\.transaction_date: paid chosen by its format \(dd\/MM\/yyyy HH:mm\), the only such field; .*paid is dd\/MM\/yyyy HH:mm without a zone/.test(t)), draft.todos.join('\n'));
    assert.ok(draft.todos.some((t) => /amount_currency: amount read as minor units .* all whole numbers/.test(t)));
    assert.match(draft.yaml, /# TODO: transactions\.status: the codes of state are not obvious/);
  });
});

describe('init: epoch change fields and sizes in thousands', () => {
  const options: RestOptions = { kind: 'rest', baseUrl: 'https://api.partner.example', auth: 'bearer', authEnv: 'PARTNER_TOKEN', paths: { customers: '/v2/traders' }, dateParam: 'date' };
  it('a change field in epoch seconds gets cursor_format unix_seconds and its TODO says the unit; a *K size is multiplied by 1000', () => {
    const records = [
      { traderId: 1, joined: 1793613600, modifiedAt: 1793613700, sizeK: 25, ib: 'a' },
      { traderId: 2, joined: 1793613800, modifiedAt: 1793613900, sizeK: 100, ib: 'b' },
    ];
    const draft = proposeDefinition('propco', 'prop-trading', options, {
      kind: 'rest',
      base_url: options.baseUrl,
      entities: [{ entity: 'customers', where: '/v2/traders', records: 2, pages: 1, records_path: 'data', pagination: { type: 'page' }, fields: profileRecords(records), references: [], notes: [] }],
    });
    const def = parse(draft.yaml) as { streams: { customers: { incremental: Record<string, unknown>; mapping: { fields: Record<string, unknown> } } } };
    assert.equal(def.streams.customers.incremental.cursor_field, 'modifiedAt');
    assert.equal(def.streams.customers.incremental.cursor_format, 'unix_seconds');
    assert.deepEqual(def.streams.customers.mapping.fields.account_size, { from: 'sizeK', multiply: 1000 });
    assert.deepEqual(def.streams.customers.mapping.fields.last_modified_date, { from: 'modifiedAt', datetime: { format: 'unix_seconds' } });
    assert.ok(draft.todos.some((t) => /sent as epoch seconds like modifiedAt/.test(t)), draft.todos.join('\n'));
  });
});

describe('the reconcile key of a definition', () => {
  it('takes a cron schedule and a number of days; a bad schedule is a definition error with its line', async () => {
    const { mkdtempSync, readFileSync, rmSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { loadDefinition } = await import('../../src/config/load-definitions.js');
    const { packageRoot } = await import('../../src/paths.js');
    const dir = mkdtempSync(join(tmpdir(), 'partner-sync-reconcile-key-'));
    try {
      const base = readFileSync(join(packageRoot(), 'config', 'partners', 'sandbox-casino.yaml'), 'utf8');
      const file = join(dir, 'sandbox-casino.yaml');
      const env = { SANDBOX_CLIENT_SECRET: 'x' };
      writeFileSync(file, `${base}\nreconcile:\n  schedule: "30 6 * * *"\n`);
      assert.deepEqual((await loadDefinition(file, env)).definition?.reconcile, { schedule: '30 6 * * *', days: 3, infer_deletes: true });
      writeFileSync(file, `${base}\nreconcile:\n  schedule: "every day"\n  days: 7\n`);
      const bad = await loadDefinition(file, env);
      assert.equal(bad.errors.length, 1);
      assert.equal(bad.errors[0]?.path, 'reconcile.schedule');
      assert.match(bad.errors[0]?.message ?? '', /not a valid cron expression/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('init: a draft that loads whatever the source lacks', () => {
  const table = (name: string, records: Record<string, unknown>[], kinds: Record<string, string>, extra: Partial<TableDiscovery> = {}): TableDiscovery => ({
    name,
    kind: 'table',
    rows: records.length,
    sampled: records.length,
    columns: Object.entries(kinds).map(([column, kind]) => ({ name: column, type: kind, kind })),
    primary_key: [],
    references: [],
    indexes: [],
    keyset: [],
    date_columns: Object.entries(kinds).filter(([, kind]) => kind === 'date').map(([column]) => column),
    fields: profileRecords(records),
    ...extra,
  });

  it('a table without a keyset index, status or currency column: a keyset, fixed values and a country left out, each with its TODO or reason', async () => {
    const { loadDefinition } = await import('../../src/config/load-definitions.js');
    const { mkdtempSync, rmSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const members = table('members', [
      { member_no: 1, joined: '2026-11-01T10:00:00Z', affid: 'a1', country: 'Germany' },
      { member_no: 2, joined: '2026-11-02T10:00:00Z', affid: 'a2', country: 'Malta' },
    ], { member_no: 'integer', joined: 'timestamp', affid: 'string', country: 'string' }, { primary_key: ['member_no'] });
    const deposits = table('deposits', [
      { dep_no: 7, member_no: 1, amount_eur: 10.5, at: '2026-11-01T11:00:00Z' },
      { dep_no: 8, member_no: 2, amount_eur: 20, at: '2026-11-02T11:00:00Z' },
    ], { dep_no: 'integer', member_no: 'integer', amount_eur: 'decimal', at: 'timestamp' }, { primary_key: ['dep_no'], references: [{ column: 'member_no', table: 'members', key: 'member_no', how: 'declared' }] });
    const draft = proposeDefinition('club', 'igaming', { kind: 'db', client: 'postgres', urlEnv: 'CLUB_URL', tables: {} }, { kind: 'db', client: 'postgres', tables: [members, deposits] });
    const def = parse(draft.yaml) as { streams: Record<string, Record<string, unknown> & { mapping: { fields: Record<string, unknown> } }> };
    assert.equal(def.streams.customers?.cursor_column, 'joined');
    assert.equal(def.streams.customers?.tiebreak_column, 'member_no');
    assert.deepEqual(def.streams.customers?.mapping.fields, { customer_id: 'member_no', signup_date: 'joined', affiliate_id: 'affid' });
    assert.match(draft.yaml, /# TODO: customers\.country_code: country not mapped: its values \("Germany"\) are not of the form \^\[A-Z\]\{2\}\$: add a map to that form, or confirm the partner has no country_code/);
    assert.ok(draft.todos.some((t) => t.startsWith('customers.country_code: country not mapped')), 'the unfit field is a TODO of the draft');
    assert.deepEqual(def.streams.transactions?.mapping.fields, { transaction_id: 'dep_no', customer_id: 'member_no', transaction_type: 'transaction_type', amount_currency: 'amount_eur', currency: { const: 'EUR' }, transaction_date: 'at', status: { const: 'approved' } });
    assert.match(draft.yaml, /# currency: no currency field; the amount's name amount_eur says EUR\n/);
    assert.ok(draft.todos.includes('transactions.status: deposits has no status field; every record taken as approved (a row exists once paid)'), draft.todos.join('\n'));
    assert.ok(draft.todos.some((t) => t.startsWith('transactions.transaction_type: no source field found for this required spec field; the spec\'s name assumed')));
    assert.ok(draft.todos.some((t) => t.startsWith('customers: members has no index on (a date-time column, a unique column); keyset on (joined, member_no) written')));
    assert.ok(draft.todos.includes('activity: no table or view recognised (tables: members, deposits); name it with --activity <table>'));
    const dir = mkdtempSync(join(tmpdir(), 'partner-sync-draft-'));
    try {
      writeFileSync(join(dir, 'club.yaml'), draft.yaml);
      assert.deepEqual((await loadDefinition(join(dir, 'club.yaml'), { CLUB_URL: 'postgres://reader@127.0.0.1/club' })).errors, []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
