/**
 * The after-load jobs' contract (src/pipeline/jobs.ts): the order and what runs side by side come
 * from what each job declares; a batch's stored versions are read once, whatever the jobs; and a
 * sixth job written as docs/development.md shows joins every other job on both stores.
 */
import assert from 'node:assert/strict';
import { addPostback } from '../../src/postbacks/definitions.js';
import { utcDay } from '../../src/kernel/dates.js';
import { AfterLoadJobs, orderJobs, type AfterLoadJob, type CommittedChange } from '../../src/pipeline/jobs.js';
import { everyJob, loaderWith } from '../support/loader.js';
import { CPA_FROM_20, plansFrom, plansYaml, planWith } from '../support/plans.js';
import { customer, deposit, raw } from '../support/records.js';
import { STORES, type TestStore } from '../support/stores.js';

const job = (name: string, after?: string[], evaluate?: AfterLoadJob['evaluate']): AfterLoadJob => ({ name, ...(after ? { after } : {}), ...(evaluate ? { evaluate } : {}) });
const change: CommittedChange = { partner: 'p', variant: 'igaming', runId: 'r', policy: 'group' };

describe('after-load jobs: order and concurrency from their declarations', () => {
  it('orders each job after those it names, keeps the listed order otherwise, and ignores a name no job has', () => {
    const order = orderJobs([job('postbacks', ['phases', 'commission']), job('facts', ['commission:days']), job('fraud'), job('commission', ['fraud', 'sub-affiliates']), job('phases')]);
    // postbacks after what it names, in the order it names them; facts after commission.
    assert.deepEqual(order.map((j) => j.name), ['phases', 'fraud', 'commission', 'postbacks', 'facts']);
  });

  it('refuses a circle of "after" and two jobs of one name, naming them', () => {
    assert.throws(() => orderJobs([job('a', ['b']), job('b', ['c']), job('c', ['a'])]), /a circle of "after": a → b → c → a/);
    assert.throws(() => orderJobs([job('a'), job('a')]), /two jobs share a name/);
  });

  it('on a concurrent store starts every evaluation at once; each awaits the jobs it names, or only their stage', async () => {
    const events: string[] = [];
    let releaseRules = (): void => undefined;
    const rules = new Promise<void>((resolve) => { releaseRules = resolve; });
    const jobs = new AfterLoadJobs([
      job('fraud', undefined, async () => { events.push('fraud start'); await rules; events.push('fraud end'); }),
      job('commission', ['fraud'], async (ctx) => {
        events.push('days derived');
        ctx.reached('days');
        await ctx.after;
        events.push('commission reads flags');
      }),
      job('facts', ['commission:days'], async (ctx) => { await ctx.after; events.push('facts'); }),
    ], true);
    const done = jobs.evaluate(change);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(events, ['fraud start', 'days derived', 'facts']);
    releaseRules();
    await done;
    assert.deepEqual(events, ['fraud start', 'days derived', 'facts', 'fraud end', 'commission reads flags']);
  });

  it('on a single-connection store runs them one after the other in that order', async () => {
    const events: string[] = [];
    const jobs = new AfterLoadJobs([
      job('facts', ['commission:days'], async () => { events.push('facts'); }),
      job('commission', ['fraud'], async (ctx) => { ctx.reached('days'); events.push('commission'); }),
      job('fraud', undefined, async () => { events.push('fraud'); }),
    ], false);
    await jobs.evaluate(change);
    assert.deepEqual(events, ['fraud', 'commission', 'facts']);
  });

  it('throws a failed evaluation once every other has ended, and a stage the failed job never reached does not hang its waiters', async () => {
    const ended: string[] = [];
    const jobs = new AfterLoadJobs([
      job('fraud', undefined, async () => { throw new Error('rules failed'); }),
      job('commission', ['fraud'], async (ctx) => { await ctx.after; ended.push('commission'); }),
      job('facts', ['fraud:judged'], async (ctx) => { await ctx.after; ended.push('facts'); }),
    ], true);
    await assert.rejects(jobs.evaluate(change), /rules failed/);
    assert.deepEqual(ended.sort(), ['commission', 'facts']);
  });

  it('unions the stored columns the jobs declare; the key alone counts as a need', () => {
    const jobs = new AfterLoadJobs([
      { name: 'a', priors: (entity) => (entity === 'transactions' ? ['status'] : undefined) },
      { name: 'b', priors: (entity) => (entity === 'transactions' ? ['customer_id', 'status'] : entity === 'customers' ? [] : undefined) },
    ], false);
    assert.deepEqual(jobs.priorColumns('transactions', 'igaming', 'at-commit'), ['status', 'customer_id']);
    assert.deepEqual(jobs.priorColumns('customers', 'igaming', 'at-commit'), []);
    assert.equal(jobs.priorColumns('activity', 'igaming', 'at-commit'), undefined);
  });
});

/** docs/development.md's example job, as written there (its table made by the test). */
function registrationsJob(): AfterLoadJob {
  return {
    name: 'registrations',
    priors: (entity) => (entity === 'customers' ? [] : undefined),
    async mark({ trx }, change) {
      const fresh = change.records.customers.filter((c) => !change.prior.customers.has(String(c.customer_id)));
      for (const c of fresh) {
        await trx('registration_days')
          .insert({ partner_id: change.partner, affiliate_id: c.affiliate_id, date: utcDay(String(c.signup_date)), n: 1 })
          .onConflict(['partner_id', 'affiliate_id', 'date']).merge({ n: trx.raw('registration_days.n + 1') });
      }
    },
  };
}

const PLANS = plansYaml(planWith(CPA_FROM_20, { qualification: '{ window_days: 30, min_first_deposit_usd: 20 }' }));

for (const backend of STORES) {
  describe(`after-load jobs on ${backend.name}: a change set read once, and a sixth job`, function () {
    this.timeout(120_000);
    let t: TestStore;
    beforeEach(async () => {
      t = await backend.create();
      await t.store.knex.schema.createTable('registration_days', (table) => {
        table.text('partner_id').notNullable();
        table.text('affiliate_id').notNullable();
        table.text('date').notNullable();
        table.integer('n').notNullable();
        table.primary(['partner_id', 'affiliate_id', 'date']);
      });
    });
    afterEach(async () => t?.drop());

    const everyJobAnd = (extra: AfterLoadJob[]) => loaderWith(t.store, [...everyJob(t.store, { plans: plansFrom(PLANS) }), ...extra]);
    const registrations = async () => ((await t.store.knex('registration_days').orderBy(['affiliate_id', 'date']).select('affiliate_id', 'date', 'n')) as { affiliate_id: string; date: string; n: unknown }[])
      .map((r) => `${r.affiliate_id} ${r.date} ${Number(r.n)}`);

    for (const policy of ['at-commit', 'group'] as const) {
      it(`counts each customer once however often it is re-sent, beside every other job (${policy})`, async () => {
        const loader = everyJobAnd([registrationsJob()]);
        const load = async (runId: string, ids: string[]) => {
          loader.evaluateRun(runId, policy);
          await loader.load({ partner: 'casino', variant: 'igaming', entity: 'customers', runId, records: raw(ids.map((id) => customer(id, { affiliate_id: id < 'c3' ? 'aff-a' : 'aff-b', signup_date: id === 'c2' ? '2026-11-02T23:59:59Z' : '2026-11-01T00:00:00+01:00' }))) });
          await loader.settle(runId);
        };
        await load('r1', ['c1', 'c2']);
        await load('r2', ['c2', 'c3', 'c4']);
        await load('r3', ['c1', 'c4']);
        // c1 signed up at 2026-10-31T23:00Z; c2 on 11-02; c3, c4 on 10-31 (aff-b).
        assert.deepEqual(await registrations(), ['aff-a 2026-10-31 1', 'aff-a 2026-11-02 1', 'aff-b 2026-10-31 2']);
      });
    }

    it('reads the stored versions of a batch once, with every job on', async () => {
      // A postback definition: the postback job needs the replaced versions too.
      await addPostback(t.store, { affiliate: 'aff-1', events: 'ftd,deposit', url: 'http://127.0.0.1:9/postback', allowPrivate: true }, 'test-postback-key-0123456789abcdef0123456789');
      const loader = everyJobAnd([]);
      await loader.load({ partner: 'casino', variant: 'igaming', entity: 'customers', runId: 'c', records: raw([customer('c1'), customer('c2')]) });
      await loader.load({ partner: 'casino', variant: 'igaming', entity: 'transactions', runId: 't1', records: raw([deposit('t1', 'c1', { currency: 'USD' }), deposit('t2', 'c2', { currency: 'USD' })]) });
      const reads: string[] = [];
      // A read of stored transactions by id that names t1 (stored, re-sent): what a job reads of the replaced versions.
      const watch = (q: { sql: string; bindings?: unknown[] }) => {
        const sql = q.sql.toLowerCase();
        if (sql.startsWith('select') && /from [`"]transactions[`"] where [`"]partner_id[`"] = .* [`"]transaction_id[`"]/.test(sql) && JSON.stringify(q.bindings ?? []).includes('t1')) reads.push(sql);
      };
      t.store.knex.on('query', watch);
      try {
        // Re-sent with another amount and a new one: the stored versions must be read (and once).
        await loader.load({ partner: 'casino', variant: 'igaming', entity: 'transactions', runId: 't2', records: raw([deposit('t1', 'c1', { currency: 'USD', amount_currency: 70 }), deposit('t2', 'c2', { currency: 'USD' }), deposit('t3', 'c2', { currency: 'USD' })]) });
      } finally {
        t.store.knex.off('query', watch);
      }
      assert.equal(reads.length, 1, reads.join('\n'));
      // The jobs still saw the batch whole: one CPA each, as computed by hand (100 USD, first deposits of 100.5 USD).
      const lines = (await t.store.knex('commission_ledger').orderBy('customer_id').select('customer_id', 'amount_usd')) as { customer_id: string; amount_usd: unknown }[];
      assert.deepEqual(lines.map((l) => `${l.customer_id} ${Number(l.amount_usd)}`), ['c1 100', 'c2 100']);
      // And the postbacks theirs: t3 is a new deposit, t1 and t2 were approved deposits before (no new fact).
      const events = (await t.store.knex('postback_events').orderBy('seq').select('kind', 'customer_id')) as { kind: string; customer_id: string }[];
      assert.deepEqual(events.map((e) => `${e.kind} ${e.customer_id}`), ['ftd c1', 'ftd c2', 'deposit c1', 'deposit c2', 'deposit c2']);
    });
  });
}
