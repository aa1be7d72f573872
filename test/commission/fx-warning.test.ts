/**
 * The FX-hold warning: a load of many batches waiting for the same missing rate warns of that
 * rate once (later evaluations log at info), and warns again for a rate not seen before.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import winston from 'winston';
import { commissionJob } from '../../jobs/commission.js';
import { loaderWith } from '../support/loader.js';
import { CPA, plansFrom, plansYaml } from '../support/plans.js';
import { raw } from '../support/records.js';
import { STORES, fixedClock, type TestStore } from '../support/stores.js';
import { igCustomer, tx } from './harness.js';

const PLANS = plansYaml(CPA);

interface Entry { level: string; message: string; missing_rates?: string[] }

function capturingLogger(): { logger: winston.Logger; entries: Entry[] } {
  const entries: Entry[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      entries.push(JSON.parse(chunk.toString()) as Entry);
      done();
    },
  });
  return { logger: winston.createLogger({ level: 'info', format: winston.format.json(), transports: [new winston.transports.Stream({ stream })] }), entries };
}

for (const backend of STORES) {
  describe(`FX-hold warning on ${backend.name}`, function () {
    this.timeout(60_000);
    let t: TestStore;
    afterEach(async () => t?.drop());

    it('is logged once per missing rate and day, not once per batch', async () => {
      t = await backend.create(fixedClock('2026-11-22T10:00:00.000Z'));
      const { logger, entries } = capturingLogger();
      const loader = loaderWith(t.store, [commissionJob(t.store, plansFrom(PLANS), logger)]);
      let run = 0;
      const load = (entity: 'customers' | 'transactions', records: Record<string, unknown>[]) =>
        loader.load({ partner: 'casino', variant: 'igaming', entity, runId: `run-${++run}`, records: raw(records) });
      await load('customers', ['c1', 'c2', 'c3', 'c4'].map((id) => igCustomer(id)));
      const eur = (id: string, customer: string, date: string) => tx(id, customer, 'deposit', 50, { currency: 'EUR', transaction_date: date });
      // Three batches waiting for the same rate (EUR on 2026-10-02), then one for another day's.
      await load('transactions', [eur('t1', 'c1', '2026-10-02T12:00:00Z')]);
      await load('transactions', [eur('t2', 'c2', '2026-10-02T13:00:00Z')]);
      await load('transactions', [eur('t3', 'c3', '2026-10-02T14:00:00Z')]);
      await load('transactions', [eur('t4', 'c4', '2026-10-03T14:00:00Z')]);
      const held = entries.filter((e) => /held waiting for FX rates/.test(e.message));
      assert.equal(held.length, 4, 'every evaluation with holds is still logged');
      const warnings = held.filter((e) => e.level === 'warn');
      assert.deepEqual(warnings.map((e) => e.message.replace(/^.*\(missing: (.*)\)$/, '$1')), ['EUR 2026-10-02', 'EUR 2026-10-03']);
      assert.deepEqual(held.filter((e) => e.level === 'info').map((e) => e.missing_rates), [['EUR 2026-10-02'], ['EUR 2026-10-02']]);
    });
  });
}
