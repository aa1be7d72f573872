/**
 * The partner-sync command line. Thin: parse arguments, call one function per command, map
 * errors to exit codes (0 success, 1 failure, 2 bad usage or bad configuration).
 */
import { Command, CommanderError, Option } from 'commander';
import { ENTITIES, VARIANTS, type Entity, type Variant } from '../types.js';
import { importCommand } from './commands/import.js';
import { migrateCommand } from './commands/migrate.js';
import { validateCommand } from './commands/validate.js';
import type { GlobalOptions } from './context.js';
import { CliError, EXIT_FAILURE, EXIT_USAGE, processIo, type Io } from './io.js';

function buildProgram(io: Io, setExit: (code: number) => void): Command {
  const program = new Command('partner-sync')
    .description('Pull partner data (customers, transactions, activity) into the store; validate, import, report.')
    .option('--config <dir>', 'folder of service settings and partner connector definitions', './config')
    .option('--store <url>', 'store URL: postgres://... or sqlite:PATH (default: env STORE_URL, else ./data/partner-sync.sqlite)')
    .showHelpAfterError('(run partner-sync --help for usage)')
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .exitOverride();

  const globals = (cmd: Command): GlobalOptions => cmd.optsWithGlobals<GlobalOptions>();
  const variant = () => new Option('--variant <variant>', 'partner variant').choices(VARIANTS).makeOptionMandatory();
  const entity = () => new Option('--entity <entity>', 'record entity').choices(ENTITIES).makeOptionMandatory();
  const run = (work: Promise<number>) => work.then(setExit);

  program
    .command('migrate')
    .description('create or upgrade the store')
    .option('--json', 'machine-readable output')
    .action((_opts, cmd: Command) => run(migrateCommand(globals(cmd), io)));

  program
    .command('validate')
    .description("check a partner's sample payload against the spec's schema (FILE: NDJSON or a JSON array; - reads stdin)")
    .addOption(variant())
    .addOption(entity())
    .option('--json', 'machine-readable output')
    .argument('<file>', 'NDJSON or JSON array file, or - for stdin')
    .action((file: string, opts: { variant: Variant; entity: Entity; json?: boolean }) =>
      run(validateCommand({ variant: opts.variant, entity: opts.entity, file, json: Boolean(opts.json) }, io)));

  program
    .command('import')
    .description('load a file of spec records for one partner through the validate-and-load path')
    .argument('<partner>', 'partner id')
    .addOption(variant())
    .addOption(entity())
    .option('--json', 'machine-readable output')
    .argument('<file>', 'NDJSON or JSON array file, or - for stdin')
    .action((partner: string, file: string, opts: { variant: Variant; entity: Entity }, cmd: Command) =>
      run(importCommand(globals(cmd), { partner, variant: opts.variant, entity: opts.entity, file }, io)));

  return program;
}

/** Runs the CLI with these arguments; resolves to the exit code. */
export async function main(argv: readonly string[], io: Io = processIo()): Promise<number> {
  let exitCode = 0;
  const program = buildProgram(io, (code) => (exitCode = code));
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end through here too, with exit code 0.
      return error.exitCode === 0 ? 0 : EXIT_USAGE;
    }
    if (error instanceof CliError) {
      io.err(`partner-sync: ${error.message}`);
      return error.exitCode;
    }
    io.err(`partner-sync: ${(error as Error).message ?? String(error)}`);
    if (process.env.DEBUG) io.err(String((error as Error).stack));
    return EXIT_FAILURE;
  }
}
