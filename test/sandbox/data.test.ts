import assert from 'node:assert/strict';
import { compareKeys, createSandboxData, type SandboxData } from '../../src/sandbox/data.js';
import { instantKey } from '../../src/sandbox/instant.js';
import { createSpecValidator } from '../../src/spec/validator.js';
import { VARIANTS, type SpecRecord } from '../../src/types.js';

const clock = () => new Date('2026-12-01T10:00:00Z');
const key = (text: unknown) => instantKey(String(text)) as string;
const without = (record: Readonly<SpecRecord>, field: string): SpecRecord => Object.fromEntries(Object.entries(record).filter(([k]) => k !== field));

describe('sandbox data', () => {
  const validator = createSpecValidator();
  const data = createSandboxData({ seed: 42, clock });

  it('is the same for the same seed and range, and differs for another seed', () => {
    const again = createSandboxData({ seed: 42, clock });
    const other = createSandboxData({ seed: 43, clock });
    for (const variant of VARIANTS) {
      assert.deepEqual(again.customers(variant), data.customers(variant));
      assert.deepEqual(again.transactions(variant), data.transactions(variant));
      assert.deepEqual(again.activity(variant), data.activity(variant));
      assert.notDeepEqual(other.customers(variant), data.customers(variant));
    }
  });

  it('does not depend on the clock once the range is given', () => {
    const a = createSandboxData({ seed: 5, from: '2026-10-01', to: '2026-10-15', customers: 30, clock });
    const b = createSandboxData({ seed: 5, from: '2026-10-01', to: '2026-10-15', customers: 30, clock: () => new Date('2030-01-01T00:00:00Z') });
    assert.deepEqual(b.transactions('igaming'), a.transactions('igaming'));
    assert.deepEqual(b.activity('prop-trading'), a.activity('prop-trading'));
  });

  it('generates each customer on its own: 10 customers are the first 10 of 20', () => {
    const small = createSandboxData({ seed: 9, customers: 10, clock });
    const large = createSandboxData({ seed: 9, customers: 20, clock });
    for (const variant of VARIANTS) {
      const ids = new Set(small.customers(variant).map((c) => c.customer_id));
      assert.deepEqual(large.customers(variant).filter((c) => ids.has(c.customer_id)), small.customers(variant));
    }
  });

  it('defaults to 200 customers per variant over the 30 days before the clock’s day', () => {
    assert.equal(data.from, '2026-11-01');
    assert.equal(data.to, '2026-11-30');
    for (const variant of VARIANTS) assert.equal(data.customers(variant).length, 200);
  });

  it('rejects a bad range', () => {
    assert.throws(() => createSandboxData({ from: '2026-11-10', to: '2026-11-01' }), /from 2026-11-10 is after to 2026-11-01/);
    assert.throws(() => createSandboxData({ from: '2026-02-30' }), /from must be a date YYYY-MM-DD/);
  });

  for (const seed of [1, 42, 2026]) {
    it(`every generated record is valid against the spec's schemas (seed ${seed})`, () => {
      const set = seed === 42 ? data : createSandboxData({ seed, clock });
      for (const variant of VARIANTS) {
        for (const c of set.customers(variant)) assert.deepEqual(validator.validate(variant, 'customers', c), [], JSON.stringify(c));
        for (const t of set.transactions(variant)) {
          assert.equal(typeof t.updated_at, 'string');
          assert.deepEqual(validator.validate(variant, 'transactions', without(t, 'updated_at')), [], JSON.stringify(t));
        }
        for (const a of set.activity(variant)) assert.deepEqual(validator.validate(variant, 'activity', a), [], JSON.stringify(a));
      }
    });
  }

  it('keeps signups, activity and changes inside the range, and references existing customers', () => {
    const start = key('2026-11-01T00:00:00Z');
    const end = key('2026-12-01T00:00:00Z');
    for (const variant of VARIANTS) {
      const customers = new Map(data.customers(variant).map((c) => [c.customer_id, c]));
      for (const c of customers.values()) {
        assert.ok(key(c.signup_date) >= start && key(c.signup_date) < end);
        assert.ok(key(c.last_modified_date) >= key(c.signup_date) && key(c.last_modified_date) < end, JSON.stringify(c));
      }
      for (const t of data.transactions(variant)) {
        const customer = customers.get(t.customer_id);
        assert.ok(customer !== undefined);
        assert.ok(key(t.transaction_date) >= key(customer.signup_date), JSON.stringify(t));
        assert.ok(key(t.updated_at) >= key(t.transaction_date) && key(t.updated_at) < end, JSON.stringify(t));
      }
      for (const a of data.activity(variant)) {
        const customer = customers.get(a.customer_id);
        assert.ok(customer !== undefined);
        assert.ok(String(a.date) >= String(customer.signup_date).slice(0, 10) && String(a.date) <= data.to);
      }
    }
  });

  it('has realistic iGaming content', () => {
    const tx = data.transactions('igaming');
    assert.deepEqual(new Set(tx.map((t) => t.transaction_type)), new Set(['deposit', 'withdrawal', 'bonus', 'adjustment', 'other']));
    assert.deepEqual(new Set(tx.map((t) => t.status)), new Set(['approved', 'pending', 'declined', 'reversed']));
    assert.ok(tx.some((t) => Number(t.amount_currency) < 0), 'a negative adjustment');
    const activity = data.activity('igaming');
    assert.deepEqual(new Set(activity.map((a) => a.game_type)), new Set(['slots', 'live_casino', 'table_games', 'sportsbook', 'poker']));
    const negative = activity.filter((a) => Number(a.wins) > Number(a.total_bets)).length;
    assert.ok(negative > 0 && negative < activity.length / 2, `${negative} of ${activity.length} rows with wins above bets`);
    for (const a of activity) {
      assert.equal(a.ggr, Math.round((Number(a.total_bets) - Number(a.wins)) * 100) / 100);
      assert.ok(Number(a.ngr) <= Number(a.ggr));
    }
    // Some players skip days: fewer rows than player-days.
    const days = new Map<unknown, Set<unknown>>();
    for (const a of activity) days.set(a.customer_id, (days.get(a.customer_id) ?? new Set()).add(a.date));
    assert.ok([...days.values()].some((d) => d.size < 10));
  });

  it('has realistic prop-trading content', () => {
    const customers = data.customers('prop-trading');
    assert.deepEqual(new Set(customers.map((c) => c.phase)), new Set(['phase_1', 'phase_2', 'funded', 'failed']));
    assert.deepEqual(new Set(customers.map((c) => c.challenge_type)), new Set(['standard', 'aggressive', 'rapid', 'instant_funding']));
    assert.ok(customers.every((c) => typeof c.account_size === 'number' && c.account_size > 0));
    const types = new Set(data.transactions('prop-trading').map((t) => t.transaction_type));
    for (const type of ['challenge_fee', 'reset_fee', 'payout', 'refund']) assert.ok(types.has(type), type);
    const activity = data.activity('prop-trading');
    assert.ok(new Set(activity.map((a) => a.instrument)).size >= 5);
    assert.ok(activity.some((a) => Number(a.pnl) < 0) && activity.some((a) => Number(a.pnl) > 0));
  });

  it('writes date-times with millisecond and with microsecond precision', () => {
    const stamps = VARIANTS.flatMap((v) => data.transactions(v).flatMap((t) => [t.transaction_date, t.updated_at]));
    assert.ok(stamps.some((s) => /\.\d{3}Z$/.test(String(s))));
    assert.ok(stamps.some((s) => /\.\d{6}Z$/.test(String(s))));
  });

  it('sorts customers by (last_modified_date, customer_id), transactions by (updated_at, transaction_id), activity by its key', () => {
    for (const variant of VARIANTS) {
      const pairs = (rows: readonly Readonly<SpecRecord>[], a: string, b: string) => rows.map((r) => [key(r[a]), String(r[b])]);
      const isSorted = (list: string[][]) => list.every((k, i) => i === 0 || compareKeys(list[i - 1] as string[], k) < 0);
      assert.ok(isSorted(pairs(data.customers(variant), 'last_modified_date', 'customer_id')));
      assert.ok(isSorted(pairs(data.transactions(variant), 'updated_at', 'transaction_id')));
      const field = variant === 'igaming' ? 'game_type' : 'instrument';
      const act = data.activity(variant).map((a) => [String(a.date), String(a.customer_id), String(a[field]), String(a.currency)]);
      assert.deepEqual(act, [...act].sort((x, y) => (x.join('\u0000') < y.join('\u0000') ? -1 : 1)));
    }
    // Batch runs give several records the same change time: the id breaks the tie.
    const updated = data.transactions('igaming').map((t) => t.updated_at);
    assert.ok(updated.length > new Set(updated).size);
  });

  describe('mutations', () => {
    let set: SandboxData;
    let now: Date;
    beforeEach(() => {
      now = new Date('2026-12-01T10:00:00Z');
      set = createSandboxData({ seed: 3, customers: 20, clock: () => now });
    });

    it('upsertCustomer merges fields and sets last_modified_date to the given time or now', () => {
      const first = set.customers('prop-trading')[0]!;
      const id = String(first.customer_id);
      const updated = set.upsertCustomer('prop-trading', { customer_id: id, phase: 'funded' }, '2026-12-01T09:00:00.123456Z');
      assert.deepEqual(updated, { ...first, phase: 'funded', last_modified_date: '2026-12-01T09:00:00.123456Z' });
      assert.equal(set.customers('prop-trading').at(-1), updated, 'now the last modified');
      set.upsertCustomer('igaming', { customer_id: 'new-1', signup_date: '2026-12-01T09:59:00Z', affiliate_id: 'aff-1' });
      assert.equal(set.customer('igaming', 'new-1')?.last_modified_date, '2026-12-01T10:00:00.000Z');
      assert.equal(set.customers('igaming').length, 21);
    });

    it('setTransactionStatus changes the status and updated_at; unknown ids throw', () => {
      const tx = set.transactions('igaming')[0]!;
      const changed = set.setTransactionStatus('igaming', String(tx.transaction_id), 'reversed');
      assert.equal(changed.status, 'reversed');
      assert.equal(changed.updated_at, '2026-12-01T10:00:00.000Z');
      assert.equal(changed.amount_currency, tx.amount_currency);
      assert.throws(() => set.setTransactionStatus('igaming', 'nope', 'approved'), /no igaming transaction "nope"/);
    });

    it('adds transactions, and adds, replaces and deletes activity rows', () => {
      set.addTransactions('igaming', [{ transaction_id: 'x-1', customer_id: 'igc-000001', transaction_type: 'deposit', amount_currency: 5, currency: 'EUR', transaction_date: '2026-12-01T09:00:00Z', status: 'pending' }], '2026-12-01T09:00:01Z');
      assert.equal(set.transaction('igaming', 'x-1')?.updated_at, '2026-12-01T09:00:01Z');
      const row = { date: '2026-12-01', customer_id: 'igc-000001', game_type: 'slots', currency: 'EUR', total_bets: 10, wins: 2 };
      assert.equal(set.putActivity('igaming', row), 'added');
      assert.equal(set.putActivity('igaming', { ...row, wins: 3 }), 'replaced');
      assert.deepEqual(set.activity('igaming', '2026-12-01'), [{ ...row, wins: 3 }]);
      assert.equal(set.deleteActivity('igaming', { date: '2026-12-01', customer_id: 'igc-000001', game_type: 'slots', currency: 'EUR' }), true);
      assert.equal(set.deleteActivity('igaming', { date: '2026-12-01', customer_id: 'igc-000001', game_type: 'slots', currency: 'EUR' }), false);
      assert.deepEqual(set.activity('igaming', '2026-12-01'), []);
    });

    it('stores records frozen, and checks only the fields it keys on', () => {
      assert.ok(Object.isFrozen(set.customers('igaming')[0]));
      assert.throws(() => set.upsertCustomer('igaming', { affiliate_id: 'a' }), /needs customer_id/);
      assert.throws(() => set.putActivity('igaming', { date: '2026-13-01', customer_id: 'c', game_type: 'slots', currency: 'EUR' }), /activity date must be YYYY-MM-DD/);
      assert.throws(() => set.upsertCustomer('igaming', { customer_id: 'c' }, 'later'), /not an ISO 8601 date-time/);
      // An invalid record (no signup_date) is stored as is: tests serve invalid records on purpose.
      assert.equal(set.upsertCustomer('igaming', { customer_id: 'bad', affiliate_id: '' }).affiliate_id, '');
    });
  });
});
