/**
 * Volume, the pull face: the same generated month served by the sandbox partner API and pulled
 * with `partner-sync run` (customers and transactions, cursor streams from the month's first day)
 * and `partner-sync backfill` (the month's activity days), every after-load job on, on each store.
 */
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { exampleCliConfig, type CliConfig } from '../support/cli-config.js';
import { SANDBOX_SECRET } from '../support/sandbox.js';
import { STORES, type TestStore } from '../support/stores.js';
import { assertMonth, cli, DATA_CLOCK, MONTH, PARTNER, ratesCsv, shippedConfig } from './support.js';

/** The test on one store; one file per store, so that the suite's parallel workers share them out. */
export function describePullMonth(store: 'sqlite' | 'postgres'): void {
  for (const backend of STORES.filter((b) => b.name === store)) {
    describe(`a month of ${MONTH.customers} customers by a pull from the sandbox partner (${backend.name})`, function () {
      this.timeout(600_000);
      let t: TestStore;
      let sandbox: Sandbox;
      let definitions: CliConfig;
      let config: ReturnType<typeof shippedConfig>;
      before(async () => {
        sandbox = await startSandbox({ port: 0, ...MONTH, clock: DATA_CLOCK, clients: [{ client_id: 'sandbox-client', client_secret: SANDBOX_SECRET }] });
        definitions = exampleCliConfig(PARTNER, sandbox.url, `${MONTH.from}T00:00:00Z`);
        config = shippedConfig(definitions.dir);
        t = await backend.create();
      });
      after(async () => {
        await sandbox?.close();
        definitions?.cleanup();
        await t?.drop();
      });

      it('reports the generated truth, the ledger agrees with a recompute, the fraud job stays under the clean-traffic rate', async () => {
        await cli(config.dir, t.url, ['fx', 'import', config.file('rates.csv', ratesCsv(MONTH.from, MONTH.to))]);
        await cli(config.dir, t.url, ['run', PARTNER, '--stream', 'customers']);
        await cli(config.dir, t.url, ['run', PARTNER, '--stream', 'transactions']);
        await cli(config.dir, t.url, ['backfill', PARTNER, '--stream', 'activity', '--from', MONTH.from, '--to', MONTH.to]);
        await assertMonth(config.dir, t.url, t.store, sandbox.data);
      });
    });
  }
}
