/**
 * `partner-sync report affiliates`: the table (as a user runs it, a subprocess), CSV, --explain,
 * and usage errors with exit 2 (through the same main() in process, to keep the suite fast).
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main.js';
import { runCli } from '../support/cli.js';
import { STORES } from '../support/stores.js';
import { money, person, reportWorld, type ReportWorld } from './support.js';

const backend = STORES.find((b) => b.name === 'sqlite');

/** main() with captured output: the CLI's code path without a process start. */
async function inProcess(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, { out: (t) => { stdout += t.endsWith('\n') ? t : `${t}\n`; }, err: (t) => { stderr += `${t}\n`; }, stdin: new PassThrough(), isTty: false });
  return { code, stdout, stderr };
}

if (backend) {
  describe('report affiliates command', () => {
    let w: ReportWorld;
    before(async () => {
      w = await reportWorld(backend);
      await w.load('customers', [person('c1', 'aff-1', { campaign_id: 'camp-a' }), person('c2', 'aff-2')]);
      await w.load('transactions', [money('d1', 'c1', 'deposit', 40), money('w1', 'c1', 'withdrawal', 15), money('d2', 'c2', 'deposit', 70)]);
    });
    after(async () => w.drop());

    it('prints the month table, the CSV and the records behind one cell; bad usage exits 2 with the reason', async () => {
      const store = ['--store', w.t.url, '--config', 'no-such-config'];
      const table = await runCli([...store, 'report', 'affiliates', '--partner', 'casino']);
      assert.equal(table.code, 0, table.stderr);
      const lines = table.stdout.trimEnd().split('\n');
      assert.match(lines[0] ?? '', /^PARTNER\s+AFFILIATE\s+MONTH\s+REG\s+FTD\s+FTD USD\s+DEPOSITORS\s+DEPOSITS USD\s+WITHDRAWALS USD\s+BONUSES USD\s+NET DEP USD\s+BETS USD\s+GGR USD\s+NGR USD\s+UNCONV\s+COMM EARNED/);
      assert.match(lines[1] ?? '', /^casino\s+aff-1\s+2026-11\s+1\s+1\s+40\.00\s+1\s+40\.00\s+15\.00\s+0\.00\s+25\.00\s/);

      const csv = await inProcess([...store, 'report', 'affiliates', '--by', 'campaign', '--csv']);
      assert.equal(csv.code, 0, csv.stderr);
      assert.deepEqual(csv.stdout.trimEnd().split('\n').map((l) => l.split(',').slice(0, 6).join(',')), [
        'partner,affiliate,campaign,registrations,ftd_count,ftd_usd', 'casino,aff-1,camp-a,1,1,40.00', 'casino,aff-2,,1,1,70.00',
      ]);

      const explain = await inProcess([...store, 'report', 'affiliates', '--explain', 'net_deposits_usd', '--affiliate', 'aff-1', '--month', '2026-11', '--json']);
      assert.equal(explain.code, 0, explain.stderr);
      const body = JSON.parse(explain.stdout) as { total: string; records: { transaction_id: string; usd: string }[] };
      assert.deepEqual([body.total, body.records.map((r) => [r.transaction_id, r.usd])], ['25.00', [['d1', '40.00'], ['w1', '15.00']]]);

      const noCell = await inProcess([...store, 'report', 'affiliates', '--explain', 'ggr_usd']);
      assert.deepEqual([noCell.code, noCell.stderr.trim()], [2, 'partner-sync: --explain names one cell: give --affiliate A and --day D, --month M or --from D --to D (and --campaign C for one campaign)']);
      const badColumn = await inProcess([...store, 'report', 'affiliates', '--explain', 'ggr', '--affiliate', 'aff-1', '--month', '2026-11']);
      assert.equal(badColumn.code, 2);
      assert.match(badColumn.stderr, /^partner-sync: --explain: unknown column "ggr"; columns: registrations, ftd_count, /);
      const badDay = await inProcess([...store, 'report', 'affiliates', '--from', '2026-11-31']);
      assert.deepEqual([badDay.code, badDay.stderr.trim()], [2, 'partner-sync: --from must be a UTC day YYYY-MM-DD, got "2026-11-31"']);
    });
  });
}
