/**
 * The onboarding commands' options (discover, init, reconcile, onboard); their code loads when
 * one of them runs (./onboarding.ts).
 */
import { Option, type Command } from 'commander';
import { ENTITIES, VARIANTS, type Entity, type Variant } from '../../types.js';
import type { GlobalOptions } from '../context.js';
import type { Io } from '../io.js';
import type { SourceFlags } from './onboarding.js';

const commands = () => import('./onboarding.js');

function addSourceFlags(cmd: Command): Command {
  return cmd
    .option('--rest <base-url>', 'a partner REST API: its base URL')
    .addOption(new Option('--auth <kind>', 'REST auth: oauth2 (client credentials), bearer or api_key').choices(['oauth2', 'bearer', 'api_key']).default('oauth2'))
    .option('--client-id <id>', 'oauth2: the client id')
    .option('--token-url <url>', 'oauth2: the token URL (default /oauth/token on the base URL)')
    .option('--api-key-header <name>', 'api_key: the header (default X-API-Key)')
    .option('--auth-env <VAR>', 'environment variable holding the secret (client secret, token or key)')
    .addOption(new Option('--db <client>', 'a database replica: mysql, postgres or sqlite').choices(['mysql', 'postgres', 'sqlite']))
    .addOption(new Option('--warehouse <client>', 'a warehouse: mysql, postgres or sqlite').choices(['mysql', 'postgres', 'sqlite']))
    .option('--url-env <VAR>', 'database or warehouse: environment variable holding the connection URL')
    .option('--schema <name>', 'database or warehouse: the schema (PostgreSQL) or database (MySQL) to list')
    .option('--customers <path-or-table>', 'REST: the customers list path; database: the customers table or view')
    .option('--transactions <path-or-table>', 'REST: the transactions list path; database: the table or view')
    .option('--activity <path-or-table>', 'REST: the daily activity list path; database: the table or view')
    .option('--date-param <name>', "REST: the activity day's query parameter", 'date')
    .option('--pages <n>', 'REST: pages read per endpoint (default 3)', (v) => Number(v))
    .option('--sample <n>', 'database: rows profiled per table (default 500)', (v) => Number(v))
    .option('--sample-date <date>', 'REST: the activity day to read (default: the latest day with rows, up to 90 days back)');
}

type Globals = (cmd: Command) => GlobalOptions;

export function registerOnboardingCommands(program: Command, io: Io, run: (work: Promise<number>) => Promise<void>, globals: Globals): void {
  addSourceFlags(program.command('discover').description("what a partner's source holds: fields, types, formats, values; tables, keysets, row counts"))
    .option('--json', 'machine-readable output')
    .action((opts: SourceFlags, cmd: Command) => run(commands().then((m) => m.discoverCommand(globals(cmd), opts, io))));
  addSourceFlags(program.command('init').description('write a draft connector definition (config/partners/<partner>.yaml) from what discover finds'))
    .argument('<partner>', 'partner id (the file name)')
    .addOption(new Option('--variant <variant>', 'partner variant').choices(VARIANTS).makeOptionMandatory())
    .option('--force', 'overwrite an existing definition')
    .option('--json', 'machine-readable output')
    .action((partner: string, opts: SourceFlags & { variant: Variant; force?: boolean }, cmd: Command) => run(commands().then((m) => m.initCommand(globals(cmd), { ...opts, partner }, io))));
  program
    .command('reconcile')
    .description('the source against the store per UTC day and entity: counts, sums, missing and differing records; exit 1 on a difference')
    .argument('<partner>', 'partner id')
    .option('--from <date>', 'first day (default: 7 days before --to)')
    .option('--to <date>', 'last day (default: yesterday, UTC)')
    .addOption(new Option('--stream <stream>', 'only this stream').choices(ENTITIES))
    .option('--sample <n>', 'records per stream compared field by field with values read apart from the definition (default 200)', (v) => Number(v))
    .option('--seed <n>', 'the sample\'s seed: the same seed draws the same records (default: drawn, and printed)', (v) => Number(v))
    .option('--apply', 'turn what this scan and the previous one both find missing at the source into deletes (the mass-delete guard judges them)')
    .option('--json', 'machine-readable output')
    .action((partner: string, opts: { from?: string; to?: string; stream?: Entity; sample?: number; seed?: number; apply?: boolean }, cmd: Command) => run(commands().then((m) => m.reconcileCommand(globals(cmd), { partner, ...opts }, io))));
  program
    .command('onboard')
    .description("verify a partner's go-live checklist (credentials, check, samples, backfill, reconcile, schedules, 24 h freshness); exit 1 until live")
    .argument('<partner>', 'partner id')
    .option('--backfill-days <n>', 'days the backfill and the reconcile must cover (default 30)', (v) => Number(v))
    .option('--json', 'machine-readable output')
    .action((partner: string, opts: { backfillDays?: number }, cmd: Command) => run(commands().then((m) => m.onboardCommand(globals(cmd), { partner, ...opts }, io))));
}
