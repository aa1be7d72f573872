/**
 * Volume, the file face: a generated month of 5,000 customers imported with `partner-sync import`
 * (files of a partner's export: every batch of 5000 records, the default, through every after-load job), on
 * each store. SQLite used to fail here on the first batch with more than 500 first deposits.
 */
import { createSandboxData } from '../../src/sandbox/data.js';
import { STORES, type TestStore } from '../support/stores.js';
import { assertMonth, cli, DATA_CLOCK, MONTH, ndjson, PARTNER, ratesCsv, shippedConfig } from './support.js';

const data = createSandboxData({ ...MONTH, clock: DATA_CLOCK });

/** The test on one store; one file per store, so that the suite's parallel workers share them out. */
export function describeImportMonth(store: 'sqlite' | 'postgres'): void {
  for (const backend of STORES.filter((b) => b.name === store)) {
    describe(`a month of ${MONTH.customers} customers by import (${backend.name})`, function () {
      this.timeout(600_000);
      let t: TestStore;
      let config: ReturnType<typeof shippedConfig>;
      before(async () => {
        t = await backend.create();
        config = shippedConfig();
      });
      after(async () => {
        config?.cleanup();
        await t?.drop();
      });

      it('reports the generated truth, the ledger agrees with a recompute, the fraud job stays under the clean-traffic rate', async () => {
        await cli(config.dir, t.url, ['fx', 'import', config.file('rates.csv', ratesCsv(MONTH.from, MONTH.to))]);
        // Transactions as a partner exports them: the sandbox's change stamp is not a spec field.
        const transactions = data.transactions('igaming').map(({ updated_at: _changed, ...tx }) => tx);
        for (const [entity, records] of [['customers', data.customers('igaming')], ['transactions', transactions], ['activity', data.activity('igaming')]] as const) {
          await cli(config.dir, t.url, ['import', PARTNER, '--variant', 'igaming', '--entity', entity, config.file(`${entity}.ndjson`, ndjson(records))]);
        }
        await assertMonth(config.dir, t.url, t.store, data);
      });
    });
  }
}
