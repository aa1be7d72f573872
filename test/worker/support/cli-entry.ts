/**
 * A stand-in for the `worker` and `status --check` commands of src/cli/main.ts, for subprocess
 * tests of this folder: the same command functions, the same options, run as a user would run
 * them (`node cli-entry.js --config DIR worker --metrics-port 0`).
 */
import { Command } from 'commander';
import { statusCommand } from '../../../src/cli/commands/status.js';
import { workerCommand } from '../../../src/cli/commands/worker.js';
import type { GlobalOptions } from '../../../src/cli/context.js';
import { CliError, processIo } from '../../../src/cli/io.js';

const io = processIo();
const whole = (name: string) => (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new CliError(`${name} must be a whole number, got ${JSON.stringify(value)}`);
  return n;
};
let code = 0;
const program = new Command('partner-sync').option('--config <dir>', '', './config').option('--store <url>').option('--json').exitOverride();
const globals = (cmd: Command): GlobalOptions => cmd.optsWithGlobals<GlobalOptions>();
program
  .command('worker')
  .option('--metrics-port <n>', '', whole('--metrics-port'))
  .option('--metrics-host <host>')
  .option('--stop-timeout <seconds>', '', whole('--stop-timeout'))
  .option('--retry-interval <minutes>', '', whole('--retry-interval'))
  .option('--concurrency <n>', '', whole('--concurrency'))
  .action(async (opts, cmd: Command) => {
    code = await workerCommand(globals(cmd), opts, io);
  });
program
  .command('status')
  .option('--partner <partner>')
  .option('--check')
  .option('--json')
  .action(async (opts: { partner?: string; check?: boolean }, cmd: Command) => {
    code = await statusCommand(globals(cmd), opts, io);
  });
try {
  await program.parseAsync(process.argv.slice(2), { from: 'user' });
} catch (error) {
  io.err(`partner-sync: ${(error as Error).message}`);
  code = error instanceof CliError ? error.exitCode : 1;
}
process.exitCode = code;
