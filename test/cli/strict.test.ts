/**
 * A strict command line, as scripts run it: an unknown command word exits 2 with
 * `unknown command 'x'` and the nearest command of its level, with or without --help, at the
 * top level and in every command group; known commands' help still prints and exits 0.
 */
import assert from 'node:assert/strict';
import { runCli } from '../support/cli.js';

const cases: { group: string[]; typo: string; nearest: string }[] = [
  { group: [], typo: 'postbaks', nearest: 'postbacks' },
  { group: [], typo: 'comissions', nearest: 'commissions' },
  { group: ['report'], typo: 'afiliates', nearest: 'affiliates' },
  { group: ['fraud'], typo: 'lst', nearest: 'list' },
  { group: ['clients'], typo: 'revok', nearest: 'revoke' },
  { group: ['users'], typo: 'ad', nearest: 'add' },
  // `commissions` has an action of its own: a word after it is still a subcommand's name.
  { group: ['commissions'], typo: 'recompte', nearest: 'recompute' },
  { group: ['fx'], typo: 'imprt', nearest: 'import' },
  { group: ['postbacks'], typo: 'replya', nearest: 'replay' },
];

describe('strict command line (subprocess)', function () {
  this.timeout(60_000);

  for (const { group, typo, nearest } of cases) {
    const words = [...group, typo];
    const where = ['partner-sync', ...group].join(' ');
    for (const help of [false, true]) {
      const args = help ? [...words, '--help'] : words;
      it(`${args.join(' ')}: exit 2, unknown command '${typo}', nearest '${nearest}'`, async () => {
        const r = await runCli(args);
        assert.equal(r.code, 2, r.stdout + r.stderr);
        assert.equal(r.stdout, '', 'no help printed on stdout');
        assert.equal(r.stderr, `${where}: unknown command '${typo}' (nearest: '${nearest}'); ${where} --help lists the commands\n`);
      });
    }
  }

  it('the word after options of the group and global options is still checked', async () => {
    const r = await runCli(['--config', './config', 'commissions', '--partner', 'acme', 'recompte', '--help']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^partner-sync commissions: unknown command 'recompte' \(nearest: 'recompute'\)/);
    const viaHelp = await runCli(['help', 'postbaks']);
    assert.equal(viaHelp.code, 2);
    assert.match(viaHelp.stderr, /^partner-sync: unknown command 'postbaks'/);
  });

  it('known commands keep their help (exit 0 on stdout) and their arguments', async () => {
    for (const args of [['--help'], ['report', '--help'], ['report', 'affiliates', '--help'], ['commissions', '--help'], ['commissions', '--partner', 'acme', 'recompute', '--help'], ['help', 'fraud']]) {
      const r = await runCli(args);
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stdout, /^Usage: partner-sync/, args.join(' '));
      assert.equal(r.stderr, '', args.join(' '));
    }
    // A leaf command's words are its arguments, whatever they look like.
    const r = await runCli(['validate', '--variant', 'igaming', '--entity', 'customers', 'status']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /status/);
    assert.doesNotMatch(r.stderr, /unknown command/);
  });
});
