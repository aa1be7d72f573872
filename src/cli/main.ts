/**
 * The partner-sync command line. Thin: parse arguments, call one function per command, map
 * errors to exit codes (0 success, 1 failure, 2 bad usage or bad configuration). An unknown
 * command word is a usage error even beside --help (./strict.ts).
 */
import { Command, CommanderError, Option } from 'commander';
import { ENTITIES, VARIANTS, type Entity, type Variant } from '../types.js';
import { registerPostbackCommands } from './commands/postbacks-commands.js';
import type { AffiliatesReportArgs } from './commands/report.js';
import type { ReportFunnelArgs } from './commands/report-funnel.js';
import { registerOnboardingCommands } from './commands/onboarding-commands.js';
import type { GlobalOptions } from './context.js';
import { processClock, type Clock } from '../kernel/clock.js';
import { findUnknownCommand, formatUnknownCommand } from './strict.js';
import type { StatementError } from '../store/store-errors.js';
import { CliError, EXIT_FAILURE, EXIT_USAGE, processIo, type Io } from './io.js';
import { setupTracing } from '../trace.js';

const ALLOW_SHRINK = 'replace activity days even when they lose more than max_day_shrink of their rows or become empty, and record empty days as loaded (a real shrink at the partner)';

/** Each command's module loads when the command runs: `--help`, and every command, start without the others. */
const commands = {
  backfill: () => import('./commands/backfill.js'),
  check: () => import('./commands/check.js'),
  clients: () => import('./commands/clients.js'),
  commissions: () => import('./commands/commissions.js'),
  customers: () => import('./commands/customers.js'),
  fraud: () => import('./commands/fraud.js'),
  fx: () => import('./commands/fx.js'),
  alerts: () => import('./commands/alerts.js'),
  import: () => import('./commands/import.js'),
  migrate: () => import('./commands/migrate.js'),
  postbacks: () => import('./commands/postbacks.js'),
  purge: () => import('./commands/purge.js'),
  rejects: () => import('./commands/rejects.js'),
  tombstones: () => import('./commands/tombstones.js'),
  deletes: () => import('./commands/deletes.js'),
  report: () => import('./commands/report.js'),
  reportFunnel: () => import('./commands/report-funnel.js'),
  run: () => import('./commands/run.js'),
  sandbox: () => import('./commands/sandbox.js'),
  serve: () => import('./commands/serve.js'),
  status: () => import('./commands/status.js'),
  users: () => import('./commands/users.js'),
  validate: () => import('./commands/validate.js'),
  worker: () => import('./commands/worker.js'),
};

function buildProgram(io: Io, setExit: (code: number) => void, clock: Clock): Command {
  const program = new Command('partner-sync')
    .description('Pull partner data (customers, transactions, activity) into the store; validate, import, report.')
    .option('--config <dir>', 'folder of service settings and partner connector definitions', './config')
    .option('--store <url>', 'store URL: postgres://... or sqlite:PATH (default: env STORE_URL, else ./data/partner-sync.sqlite)')
    .showHelpAfterError('(run partner-sync --help for usage)')
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .exitOverride();

  const globals = (cmd: Command): GlobalOptions => ({ ...cmd.optsWithGlobals<GlobalOptions>(), clock });
  program.option('--json', 'machine-readable output (every reporting command)');
  const variant = () => new Option('--variant <variant>', 'partner variant').choices(VARIANTS).makeOptionMandatory();
  const entity = () => new Option('--entity <entity>', 'record entity').choices(ENTITIES).makeOptionMandatory();
  const stream = () => new Option('--stream <stream>', 'only this stream').choices(ENTITIES);
  const json = () => new Option('--json', 'machine-readable output');
  const integer = (name: string) => (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0) throw new CliError(`${name} must be a whole number, got ${JSON.stringify(value)}`);
    return n;
  };
  const fraction = (value: string): number => {
    const n = Number(value);
    if (!(n >= 0 && n <= 1)) throw new CliError(`--error-rate must be between 0 and 1, got ${JSON.stringify(value)}`);
    return n;
  };
  const run = (work: Promise<number>) => work.then(setExit);

  program
    .command('migrate')
    .description('create or upgrade the store')
    .option('--json', 'machine-readable output')
    .action((_opts, cmd: Command) => run(commands.migrate().then((m) => m.migrateCommand(globals(cmd), io))));

  program
    .command('validate')
    .description("check a partner's sample payload against the spec's schema (FILE: NDJSON or a JSON array; - reads stdin)")
    .addOption(variant())
    .addOption(entity())
    .option('--json', 'machine-readable output')
    .argument('<file>', 'NDJSON or JSON array file, or - for stdin')
    .action((file: string, opts: { variant: Variant; entity: Entity }, cmd: Command) =>
      run(commands.validate().then((m) => m.validateCommand({ variant: opts.variant, entity: opts.entity, file, json: Boolean(globals(cmd).json) }, io))));

  program
    .command('import')
    .description('load files of spec records for one partner through the validate-and-load path: --entity E FILE, or --customers/--transactions/--activity FILE settled together')
    .argument('<partner>', 'partner id')
    .addOption(variant())
    .addOption(new Option('--entity <entity>', 'record entity of FILE').choices(ENTITIES))
    .option('--customers <file>', 'a file of customers (with --transactions and --activity: one load, its jobs evaluated once at the end)')
    .option('--transactions <file>', 'a file of transactions')
    .option('--activity <file>', 'a file of daily activity')
    .option('--json', 'machine-readable output')
    .argument('[file]', 'with --entity: NDJSON or JSON array file, or - for stdin')
    .action((partner: string, file: string | undefined, opts: { variant: Variant; entity?: Entity } & Partial<Record<Entity, string>>, cmd: Command) =>
      run(commands.import().then((m) => m.importCommand(globals(cmd), { partner, variant: opts.variant, entity: opts.entity, file, files: ENTITIES.flatMap((e) => (opts[e] === undefined ? [] : [{ entity: e, file: opts[e]! }])) }, io))));

  program
    .command('check')
    .description('validate connector definitions, test auth and read one page per stream')
    .option('--partner <partner>', 'only this partner')
    .addOption(json())
    .action((opts: { partner?: string }, cmd: Command) => run(commands.check().then((m) => m.checkCommand(globals(cmd), opts, io))));

  program
    .command('run')
    .description('one incremental sync of a partner now')
    .argument('<partner>', 'partner id')
    .addOption(stream())
    .option('--allow-shrink', ALLOW_SHRINK)
    .addOption(json())
    .action((partner: string, opts: { stream?: Entity; allowShrink?: boolean }, cmd: Command) =>
      run(commands.run().then((m) => m.runCommand(globals(cmd), { partner, stream: opts.stream, allowShrink: opts.allowShrink }, io))));

  program
    .command('backfill')
    .description('re-pull a closed date range through the same code, without moving incremental state')
    .argument('<partner>', 'partner id')
    .requiredOption('--from <date>', 'first day, YYYY-MM-DD')
    .requiredOption('--to <date>', 'last day, YYYY-MM-DD (a closed day)')
    .addOption(stream())
    .option('--allow-shrink', ALLOW_SHRINK)
    .addOption(json())
    .action((partner: string, opts: { from: string; to: string; stream?: Entity; allowShrink?: boolean }, cmd: Command) =>
      run(commands.backfill().then((m) => m.backfillCommand(globals(cmd), { partner, ...opts }, io))));

  program
    .command('status')
    .description('per partner and stream: last run, watermark, freshness against the spec targets, rejects, waiting')
    .option('--partner <partner>', 'only this partner')
    .option('--check', 'exit 1 when a configured stream breaches its freshness target (or a definition is invalid); an error event per breach')
    .addOption(json())
    .action((opts: { partner?: string; check?: boolean }, cmd: Command) => run(commands.status().then((m) => m.statusCommand(globals(cmd), { partner: opts.partner, check: opts.check }, io))));

  program
    .command('worker')
    .description('the cron daemon for every partner: schedules from the definitions (UTC); SIGTERM/SIGINT stop, SIGHUP reloads')
    .option('--metrics-port <n>', 'serve /metrics (Prometheus), /healthz (liveness) and /readyz (readiness) on this port', integer('--metrics-port'))
    .option('--metrics-host <host>', 'address of the metrics server (default 127.0.0.1)')
    .option('--stop-timeout <seconds>', 'on SIGTERM/SIGINT, wait this long for running runs, then abandon them (default 20)', integer('--stop-timeout'))
    .option('--retry-interval <minutes>', 'retry a daily run whose day has not loaded every N minutes (default 15)', integer('--retry-interval'))
    .option('--concurrency <n>', 'runs at once in this worker (default 4 on PostgreSQL, 1 on SQLite)', integer('--concurrency'))
    .action((opts: Record<string, unknown>, cmd: Command) => run(commands.worker().then((m) => m.workerCommand(globals(cmd), opts, io))));

  program
    .command('rejects')
    .description('open quarantined records with reasons; --replay loads them again after a fix; --discard closes them deliberately')
    .argument('<partner>', 'partner id')
    .option('--replay', 'map, validate and load the open rejects again')
    .option('--all', 'list resolved rejects too, with how, when and by which run or whom they were closed')
    .option('--discard', 'close the open rejects (of --stream, last seen --before) deliberately; needs --reason')
    .option('--before <date>', 'with --discard: only rejects last seen before this date (YYYY-MM-DD, UTC) or date-time')
    .option('--reason <text>', 'with --discard: why they are closed (kept for audit)')
    .addOption(stream())
    .option('--limit <n>', 'show at most N', integer('--limit'))
    .addOption(json())
    .action((partner: string, opts: { replay?: boolean; all?: boolean; discard?: boolean; before?: string; reason?: string; stream?: Entity; limit?: number }, cmd: Command) =>
      run(commands.rejects().then((m) => m.rejectsCommand(globals(cmd), { partner, ...opts }, io))));

  const customers = program
    .command('customers')
    .description("a customer's personal data: erase it everywhere, the money kept; list the erasures");
  customers
    .command('erase')
    .description('erase the personal fields (e-mail, names) of these customers everywhere in the store; later loads of them keep none')
    .argument('<partner>', 'partner id')
    .argument('[customer_ids...]', 'customer ids')
    .option('--file <file>', 'customer ids, one a line')
    .addOption(json())
    .action((partner: string, ids: string[], opts: { file?: string }, cmd: Command) =>
      run(commands.customers().then((m) => m.customersEraseCommand(globals(cmd), { partner, customers: ids, ...opts }, io))));
  customers
    .command('erasures')
    .description('the erasures done: who, when, through which face, rows per table (never the values)')
    .argument('[partner]', 'only this partner')
    .option('--customer <id>', 'only this customer')
    .addOption(json())
    .action((partner: string | undefined, opts: { customer?: string }, cmd: Command) =>
      run(commands.customers().then((m) => m.customersErasuresCommand(globals(cmd), { partner, ...opts }, io))));

  program
    .command('purge')
    .description('remove what the retention of <config>/retention.yaml no longer keeps: delivered postback events, resolved rejects, old runs')
    .option('--dry-run', 'count what would go; remove nothing')
    .option('--batch <n>', 'rows a transaction removes at most (default 1000)', integer('--batch'))
    .option('--max-seconds <s>', 'stop after this long (default 60); the next purge goes on', integer('--max-seconds'))
    .addOption(json())
    .action((opts: { dryRun?: boolean; batch?: number; maxSeconds?: number }, cmd: Command) => run(commands.purge().then((m) => m.purgeCommand(globals(cmd), opts, io))));

  program
    .command('tombstones')
    .description('records deleted at the source: how and when each delete was learned, and what went with a deleted customer')
    .argument('<partner>', 'partner id')
    .option('--customer <id>', "only this customer's")
    .addOption(json())
    .action((partner: string, opts: { customer?: string }, cmd: Command) =>
      run(commands.tombstones().then((m) => m.tombstonesCommand(globals(cmd), { partner, ...opts }, io))));

  const deletes = program
    .command('deletes')
    .description('deletes the mass-delete guard held: list them, apply them (the ledger follows) or discard them');
  deletes
    .command('list')
    .description('the held deletes (--all: decided ones too), each with its partner, stream, records and why it was held')
    .option('--partner <partner>', 'only this partner')
    .option('--all', 'applied and discarded holds too')
    .addOption(json())
    .action((opts: { partner?: string; all?: boolean }, cmd: Command) => run(commands.deletes().then((m) => m.deletesListCommand(globals(cmd), opts, io))));
  for (const [decision, what] of [['apply', 'delete the records a hold holds, through every after-load job (clawbacks, reports, fraud, postbacks)'], ['discard', 'keep the records a hold holds; the hold closes']] as const) {
    deletes
      .command(decision)
      .description(what)
      .argument('<id>', 'the hold (partner-sync deletes list)')
      .addOption(json())
      .action((id: string, _opts: unknown, cmd: Command) => run(commands.deletes().then((m) => m.deletesDecideCommand(globals(cmd), { id, decision }, io))));
  }

  const commissions = program
    .command('commissions')
    .description('the commission ledger: totals per affiliate, month and plan (--lines: the lines behind them); held entries')
    .option('--affiliate <id>', 'only this affiliate')
    .option('--month <YYYY-MM>', 'only this month (UTC)')
    .option('--partner <partner>', 'only this partner')
    .option('--plan <plan>', 'only this plan')
    .option('--lines', 'the ledger lines behind the totals')
    .addOption(json())
    .action((opts: { affiliate?: string; month?: string; partner?: string; plan?: string; lines?: boolean }, cmd: Command) =>
      run(commands.commissions().then((m) => m.commissionsCommand(globals(cmd), opts, io))));
  commissions
    .command('recompute')
    .description('rebuild from history and compare with the incremental ledger to the cent; --repair books the differences')
    .option('--partner <partner>', 'only this partner')
    .option('--month <YYYY-MM>', 'only this month (UTC)')
    .option('--affiliate <id>', 'only this affiliate')
    .option('--repair', 'append correction lines for every difference')
    .addOption(json())
    .action((opts: { partner?: string; month?: string; affiliate?: string; repair?: boolean }, cmd: Command) =>
      run(commands.commissions().then((m) => m.commissionsRecomputeCommand(globals(cmd), { ...inheritedFilters(cmd, ['partner', 'month', 'affiliate']), ...definedOnly(opts) }, io))));
  commissions
    .command('approve')
    .description("approve an affiliate's closed month (once; the commission_approved postback announces it)")
    .option('--affiliate <id>', 'the affiliate (required)')
    .option('--month <YYYY-MM>', 'a month before the current one, UTC (required)')
    .option('--by <name>', 'who approves (default: $USER)')
    .addOption(json())
    .action((opts: { affiliate?: string; month?: string; by?: string }, cmd: Command) =>
      run(commands.postbacks().then((m) => m.commissionsApproveCommand(globals(cmd), { ...inheritedFilters(cmd, ['month', 'affiliate']), ...definedOnly(opts) }, io))));

  const fx = program
    .command('fx')
    .description('FX rates for USD conversion of records without amount_usd');
  fx
    .command('import')
    .description('import rates per currency per day from a CSV file; held commission entries are released')
    .argument('<file>', 'CSV file')
    .addOption(json())
    .action((file: string, _opts: unknown, cmd: Command) => run(commands.fx().then((m) => m.fxImportCommand(globals(cmd), { file }, io))));
  fx
    .command('fetch')
    .description('read the daily FX feed now (config/fx-feed.yaml, or --url and --format): its rates are written and held commission entries released')
    .option('--url <url>', "the feed's URL (default: config/fx-feed.yaml's)")
    .addOption(new Option('--format <format>', 'ecb (eurofxref-daily.xml) or json ({base, date, rates})').choices(['ecb', 'json']))
    .addOption(json())
    .action((opts: { url?: string; format?: 'ecb' | 'json' }, cmd: Command) => run(commands.fx().then((m) => m.fxFetchCommand(globals(cmd), opts, io))));

  program
    .command('alerts')
    .description("the worker's alerts (config/alerts.yaml): send a test message through a channel")
    .command('test')
    .description('one test message through a channel now; exit 1 unless it is delivered')
    .argument('<channel>', 'a channel name of config/alerts.yaml (webhook: the ALERT_WEBHOOK_URL one)')
    .addOption(json())
    .action((channel: string, _opts: unknown, cmd: Command) => run(commands.alerts().then((m) => m.alertsTestCommand(globals(cmd), { channel }, io))));

  // `report <name>`: one subcommand per report, each in its own command file.
  const report = program.command('report').description('reports on the store and the commission ledger (tables, --json, --csv)');
  report
    .command('affiliates')
    .description('per affiliate and day, month or campaign: registrations, FTDs, deposits, GGR/NGR, challenge purchases, fees, payouts, commissions')
    .option('--partner <partner>', 'only this partner')
    .option('--affiliate <affiliate>', 'only this affiliate')
    .option('--from <YYYY-MM-DD>', 'first UTC day')
    .option('--to <YYYY-MM-DD>', 'last UTC day (inclusive)')
    .addOption(new Option('--by <grain>', 'one row per affiliate and').choices(['day', 'month', 'campaign']).default('month'))
    .option('--campaign <campaign>', 'only this campaign (with --explain: the cell of this campaign)')
    .option('--day <YYYY-MM-DD>', 'with --explain: the cell of this UTC day')
    .option('--month <YYYY-MM>', 'with --explain: the cell of this month')
    .option('--explain <column>', 'list the source records (or ledger lines) behind one cell of this column')
    .option('--csv', 'CSV with a header row')
    .addOption(json())
    .action((opts: AffiliatesReportArgs, cmd: Command) => run(commands.report().then((m) => m.affiliatesReportCommand(globals(cmd), opts, io))));
  const fraud = program.command('fraud').description('fraud-pattern flags (docs/fraud.md): list, show, confirm, dismiss, scan');
  fraud.command('list').description('flags, newest last')
    .option('--partner <partner>', 'only this partner').option('--status <status>', 'open | confirmed | dismissed').option('--rule <rule>', 'only this rule').addOption(json())
    .action((opts: { partner?: string; status?: string; rule?: string }, cmd: Command) => run(commands.fraud().then((m) => m.fraudListCommand(globals(cmd), opts, io))));
  fraud.command('show').description('one flag: customers, evidence, decisions').argument('<id>', 'flag id').addOption(json())
    .action((id: string, _opts: unknown, cmd: Command) => run(commands.fraud().then((m) => m.fraudShowCommand(globals(cmd), { id }, io))));
  for (const [name, decision] of [['confirm', 'confirmed'], ['dismiss', 'dismissed']] as const) {
    fraud.command(name).description(`${name} an open flag (${decision === 'confirmed' ? 'its customers’ commissions are voided' : 'its customers’ held commissions are released'})`)
      .argument('<id>', 'flag id').option('--reason <text>', 'why (required; kept for audit)').option('--by <name>', 'who decides (default: the OS user)').addOption(json())
      .action((id: string, opts: { reason?: string; by?: string }, cmd: Command) => run(commands.fraud().then((m) => m.fraudDecideCommand(globals(cmd), { id, decision, ...opts }, io))));
  }
  fraud.command('scan').description('re-evaluate history with config/fraud.yaml (idempotent)')
    .option('--partner <partner>', 'only this partner').option('--from <date>', 'only customers with data on or after this UTC day (YYYY-MM-DD)').addOption(json())
    .action((opts: { partner?: string; from?: string }, cmd: Command) => run(commands.fraud().then((m) => m.fraudScanCommand(globals(cmd), opts, io))));

  report
    .command('funnel')
    .description('prop-trading evaluation funnel: signup → phase_1 → phase_2 → funded, failed at each stage; conversion and median days')
    .option('--partner <partner>', 'only this partner')
    .option('--affiliate <id>', 'only this affiliate')
    .option('--from <date>', 'first signup day, YYYY-MM-DD (UTC)')
    .option('--to <date>', 'last signup day, YYYY-MM-DD (UTC)')
    .option('--by <group>', 'one row per affiliate | challenge_type | account_size | cohort (signup month)')
    .option('--csv', 'CSV output')
    .option('--explain <cell>', 'the customers and phase history behind one cell: signup, phase_1, phase_2, funded, failed_phase_1, failed_phase_2, failed_funded, failed_unknown; or behind a median: days_signup_phase_1, days_phase_1_phase_2, days_phase_2_funded')
    .option('--group <value>', "with --explain and --by: the row's group value")
    .addOption(json())
    .action((opts: ReportFunnelArgs, cmd: Command) => run(commands.reportFunnel().then((m) => m.reportFunnelCommand(globals(cmd), opts, io))));

  program
    .command('sandbox')
    .description('a local example partner API (spec conventions) for the demo and tests')
    .option('--port <n>', 'port on 127.0.0.1', integer('--port'), 4010)
    .option('--seed <n>', 'data seed', integer('--seed'))
    .option('--customers <n>', 'customers per variant', integer('--customers'))
    .option('--error-rate <f>', 'fraction of API requests answered 5xx', fraction)
    .option('--latency <ms>', 'added latency per request', integer('--latency'))
    .option('--throttle-every <n>', 'every Nth request gets 429', integer('--throttle-every'))
    .option('--token-ttl <s>', 'access token lifetime in seconds', integer('--token-ttl'))
    .option('--duplicates', 'repeat the last record of each page on the next page')
    .option('--fraud-patterns <n>', 'add n labelled instances of each fraud rule to the data', integer('--fraud-patterns'))
    .addOption(new Option('--style <style>', "spec (the spec's names) or partner (camelCase names, epoch-ms times, cents, numeric ids, codes)").choices(['spec', 'partner']))
    .action((opts: { port: number; seed?: number; customers?: number; errorRate?: number; latency?: number; throttleEvery?: number; tokenTtl?: number; duplicates?: boolean; fraudPatterns?: number; style?: 'spec' | 'partner' }) =>
      run(commands.sandbox().then((m) => m.sandboxCommand({ ...opts, latencyMs: opts.latency, clock }, io))));

  program
    .command('serve')
    .description('the HTTP API (push, lists, OAuth tokens): HTTPS with --tls-cert/--tls-key; plain HTTP on loopback or behind a TLS proxy (--trust-proxy)')
    .option('--host <host>', 'address to listen on (default 127.0.0.1)')
    .option('--port <n>', 'port (default env PORT, else 8080; 0 picks a free one)', integer('--port'))
    .option('--tls-cert <file>', 'PEM certificate (chain) for HTTPS')
    .option('--tls-key <file>', 'PEM private key for HTTPS')
    .option('--trust-proxy', 'behind a TLS-terminating proxy: allow plain HTTP on any address, trust X-Forwarded-*')
    .action((opts: { host?: string; port?: number; tlsCert?: string; tlsKey?: string; trustProxy?: boolean }, cmd: Command) =>
      run(commands.serve().then((m) => m.serveCommand(globals(cmd), opts, io))));

  program
    .command('users')
    .description('web console users')
    .command('add')
    .description('a console user; staff: password from PARTNER_SYNC_USER_PASSWORD, asked on a terminal, or generated and printed once; an affiliate (or --invite): a one-time link to set it')
    .argument('<name>', 'user name')
    .addOption(new Option('--role <role>', "operator (runs, backfills, replays), manager (money, fraud decisions) or affiliate (its own figures, players, statements, postbacks)").choices(['operator', 'manager', 'affiliate']).makeOptionMandatory())
    .option('--affiliate <id>', 'the affiliate role: an affiliate id, or PARTNER:AFF_ID; repeat for the same person across partners', (v: string, prev: string[] = []) => [...prev, v])
    .option('--invite', 'staff too: a one-time link instead of a password')
    .option('--console-url <url>', "the console's address for the link (default env PARTNER_SYNC_CONSOLE_URL)")
    .addOption(json())
    .action((name: string, opts: { role: string; affiliate?: string[]; invite?: boolean; consoleUrl?: string }, cmd: Command) =>
      run(commands.users().then((m) => m.usersAddCommand(globals(cmd), { name, role: opts.role, affiliates: opts.affiliate, invite: opts.invite, consoleUrl: opts.consoleUrl }, io))));

  const clients = program
    .command('clients')
    .description('API client credentials (OAuth client credentials) of partners: add, list, revoke');
  clients
    .command('add')
    .description('a new client: prints its client_id and client_secret once (only a hash of the secret is kept)')
    .argument('<partner>', 'partner id')
    .option('--variant <variant>', 'for a partner without a connector definition (push only): igaming or prop-trading')
    .option('--scope <scopes>', 'read, write or read,write (default read,write)')
    .option('--affiliate <id>', "the credential sees only this affiliate's report rows")
    .option('--personal-data <policy>', "what its pushes keep of the personal customer fields, e.g. email=hash,first_name=drop (keep, hash or drop; default: the partner definition's personal_data, else keep)")
    .addOption(json())
    .action((partner: string, opts: { variant?: string; scope?: string; affiliate?: string; personalData?: string }, cmd: Command) =>
      run(commands.clients().then((m) => m.clientsAddCommand(globals(cmd), { partner, ...opts }, io))));
  clients
    .command('list')
    .description('the clients (never their secrets)')
    .option('--partner <partner>', 'only this partner')
    .addOption(json())
    .action((opts: { partner?: string }, cmd: Command) => run(commands.clients().then((m) => m.clientsListCommand(globals(cmd), opts, io))));
  clients
    .command('revoke')
    .description("revoke a client: its tokens stop working within seconds on every serve process of the store")
    .argument('<client_id>', 'client id')
    .addOption(json())
    .action((clientId: string, _opts: unknown, cmd: Command) => run(commands.clients().then((m) => m.clientsRevokeCommand(globals(cmd), { clientId }, io))));

  registerOnboardingCommands(program, io, run, globals);
  registerPostbackCommands(program, io, run, globals, integer);
  positionalOptionsBelowRoot(program);
  return program;
}

/**
 * A command with subcommands keeps its options to itself: `commissions recompute --partner X`
 * gives --partner to `recompute`, not to `commissions` (which declares one of the same name).
 * The root stays as it is, so global options (--config, --store, --json) work anywhere.
 */
function positionalOptionsBelowRoot(program: Command): void {
  const walk = (cmd: Command): void => {
    for (const sub of cmd.commands) {
      if (sub.commands.length > 0) sub.enablePositionalOptions();
      walk(sub);
    }
  };
  walk(program);
}

/** The parent's values of these options, for `commissions --partner X recompute` (the filter written before the subcommand). */
function inheritedFilters(cmd: Command, names: readonly string[]): Record<string, string> {
  const parent = cmd.parent?.opts<Record<string, unknown>>() ?? {};
  return Object.fromEntries(names.filter((n) => typeof parent[n] === 'string').map((n) => [n, parent[n] as string]));
}

const definedOnly = <T extends object>(opts: T): Partial<T> => Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)) as Partial<T>;

/** Runs the CLI with these arguments; resolves to the exit code. */
export async function main(argv: readonly string[], io: Io = processIo()): Promise<number> {
  let exitCode = 0;
  // One clock for the whole process, taken once: every command, the worker and serve read it.
  let clock: Clock;
  try {
    clock = processClock();
  } catch (error) {
    io.err(`partner-sync: ${(error as Error).message}`);
    return EXIT_USAGE;
  }
  const program = buildProgram(io, (code) => (exitCode = code), clock);
  const unknown = findUnknownCommand(program, argv);
  if (unknown) {
    io.err(formatUnknownCommand(unknown));
    return EXIT_USAGE;
  }
  // Traces when an OTLP endpoint is configured (src/trace.ts): exported at the command's end,
  // the worker's and serve's included.
  let stopTracing: (() => Promise<void>) | undefined;
  try {
    stopTracing = setupTracing(process.env);
  } catch (error) {
    io.err(`partner-sync: ${(error as Error).message}`);
    return EXIT_USAGE;
  }
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
    if (process.env.DEBUG) {
      io.err(String((error as Error).stack));
      // A failed store statement's text (placeholders, no values: src/store/store-errors.ts), and the causes behind the error.
      for (let e: unknown = error; e instanceof Error; e = e.cause) {
        const statement = (e as StatementError).statement;
        if (statement !== undefined) io.err(`statement: ${statement}`);
      }
    }
    return EXIT_FAILURE;
  } finally {
    await stopTracing?.();
  }
}
