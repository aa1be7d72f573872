/**
 * Volume, the file face: a generated month of 5,000 customers imported with `partner-sync import`
 * (files of a partner's export: every batch of 5000 records, the default, through every after-load job), on
 * each store: as one command of the three files (`--customers F --transactions F --activity F`,
 * the jobs evaluated once at its end), or as three commands of one file each (`--entity E F`, each
 * evaluating them at its end). SQLite used to fail here on the first batch with more than 500 first deposits.
 */
import { createSandboxData } from '../../src/sandbox/data.js';
import { STORES, type TestStore } from '../support/stores.js';
import { assertMonth, cli, DATA_CLOCK, MONTH, ndjson, PARTNER, ratesCsv, shippedConfig } from './support.js';

const data = createSandboxData({ ...MONTH, clock: DATA_CLOCK });

/** The test on one store; one file per store, so that the suite's parallel workers share them out. */
export function describeImportMonth(store: 'sqlite' | 'postgres', form: 'one command' | 'three commands'): void {
  for (const backend of STORES.filter((b) => b.name === store)) {
    describe(`a month of ${MONTH.customers} customers by import, ${form} (${backend.name})`, function () {
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
        const files = ([['customers', data.customers('igaming')], ['transactions', transactions], ['activity', data.activity('igaming')]] as const)
          .map(([entity, records]) => [entity, config.file(`${entity}.ndjson`, ndjson(records))] as const);
        if (form === 'one command') await cli(config.dir, t.url, ['import', PARTNER, '--variant', 'igaming', ...files.flatMap(([entity, file]) => [`--${entity}`, file])]);
        else for (const [entity, file] of files) await cli(config.dir, t.url, ['import', PARTNER, '--variant', 'igaming', '--entity', entity, file]);
        await assertMonth(config.dir, t.url, t.store, data);
      });
    });
  }
}
