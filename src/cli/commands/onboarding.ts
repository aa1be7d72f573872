/**
 * Onboarding a partner: `discover` (what the source holds), `init` (a draft definition from it)
 * and `reconcile` (the source against the store, per UTC day). Registered by main.ts with one line.
 */
import { inferDeletes, inferredLines } from '../../../jobs/infer-deletes.js';
import { cliLoader } from '../loader.js';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkPartner } from '../../../jobs/check-partner.js';
import { loadDefinition, formatDefinitionError } from '../../config/load-definitions.js';
import { createRedactor } from '../../config/redact.js';
import { createLogger } from '../../log.js';
import { saveChecklist, verifyChecklist } from '../../onboarding/checklist.js';
import { discover, discoveryLines, pagingText } from '../../onboarding/discover.js';
import { proposeDefinition } from '../../onboarding/propose.js';
import { reconcile, reconciliationLines } from '../../onboarding/reconcile.js';
import { SourceOptionsError, type AuthKind, type SourceOptions } from '../../onboarding/source-options.js';
import { specValidator } from '../../spec/validator.js';
import type { Clock } from '../../kernel/clock.js';
import { ENTITIES, type Entity, type Variant } from '../../types.js';
import { commandClock, withStore, type GlobalOptions } from '../context.js';
import { loadConfig, partnerDefinition } from '../definitions.js';
import { CliError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, type Io } from '../io.js';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

export interface SourceFlags {
  rest?: string;
  auth?: AuthKind;
  clientId?: string;
  apiKeyHeader?: string;
  authEnv?: string;
  tokenUrl?: string;
  db?: 'mysql' | 'postgres' | 'sqlite';
  warehouse?: 'mysql' | 'postgres' | 'sqlite';
  urlEnv?: string;
  schema?: string;
  customers?: string;
  transactions?: string;
  activity?: string;
  dateParam?: string;
  pages?: number;
  sample?: number;
  sampleDate?: string;
}

export function sourceOptions(flags: SourceFlags): SourceOptions {
  const picked = [flags.rest, flags.db, flags.warehouse].filter((v) => v !== undefined).length;
  if (picked !== 1) throw new CliError('name one source: --rest <base-url>, --db <client> or --warehouse <client>', EXIT_USAGE);
  const named: Partial<Record<Entity, string>> = {};
  for (const entity of ENTITIES) if (flags[entity] !== undefined) named[entity] = flags[entity];
  if (flags.rest !== undefined) {
    if (flags.authEnv === undefined) throw new CliError('--auth-env <VAR> is required with --rest: the environment variable holding the secret', EXIT_USAGE);
    if (Object.keys(named).length === 0) throw new CliError('give the list paths: --customers PATH --transactions PATH --activity PATH', EXIT_USAGE);
    return { kind: 'rest', baseUrl: flags.rest, auth: flags.auth ?? 'oauth2', clientId: flags.clientId, apiKeyHeader: flags.apiKeyHeader, authEnv: flags.authEnv, tokenUrl: flags.tokenUrl, paths: named, dateParam: flags.dateParam ?? 'date' };
  }
  if (flags.urlEnv === undefined) throw new CliError('--url-env <VAR> is required with --db or --warehouse: the environment variable holding the connection URL', EXIT_USAGE);
  return { kind: flags.db !== undefined ? 'db' : 'warehouse', client: (flags.db ?? flags.warehouse) as 'mysql', urlEnv: flags.urlEnv, schema: flags.schema, tables: named };
}

async function runDiscover(flags: SourceFlags, clock: Clock) {
  const options = sourceOptions(flags);
  if (flags.sampleDate !== undefined && !(DATE.test(flags.sampleDate) && !Number.isNaN(Date.parse(`${flags.sampleDate}T00:00:00Z`)))) {
    throw new CliError(`--sample-date must be a date YYYY-MM-DD, got ${JSON.stringify(flags.sampleDate)}`, EXIT_USAGE);
  }
  const logger = createLogger({ redact: createRedactor([]), level: process.env.LOG_LEVEL ?? 'warn' });
  try {
    return { options, found: await discover(options, { clock, logger, env: process.env, pages: flags.pages, sample: flags.sample, sampleDate: flags.sampleDate }) };
  } catch (error) {
    if (error instanceof SourceOptionsError) throw new CliError(error.message, EXIT_USAGE);
    throw new CliError(`discover failed: ${(error as Error).message}`, EXIT_FAILURE, { cause: error });
  }
}

/** `discover --rest URL ... | --db CLIENT --url-env VAR ...`: what the source holds. */
export async function discoverCommand(globals: GlobalOptions, flags: SourceFlags, io: Io): Promise<number> {
  const { found } = await runDiscover(flags, commandClock(globals));
  if (globals.json) io.out(JSON.stringify(found));
  else io.out(discoveryLines(found).join('\n'));
  return EXIT_OK;
}

/** `init <partner> --variant V <source flags> [--force]`: a draft definition from discover's findings. */
export async function initCommand(globals: GlobalOptions, args: SourceFlags & { partner: string; variant: Variant; force?: boolean }, io: Io): Promise<number> {
  if (!/^[a-z0-9][a-z0-9_-]*$/.test(args.partner)) throw new CliError(`the partner id must be lower-case letters, digits, - and _: ${JSON.stringify(args.partner)}`, EXIT_USAGE);
  const dir = join(globals.config, 'partners');
  const file = join(dir, `${args.partner}.yaml`);
  if (existsSync(file) && args.force !== true) throw new CliError(`${file} exists; pass --force to overwrite it`, EXIT_USAGE);
  const { options, found } = await runDiscover(args, commandClock(globals));
  const draft = proposeDefinition(args.partner, args.variant, options, found);
  mkdirSync(dir, { recursive: true });
  writeFileSync(file, draft.yaml);
  // What is left: the definition's own errors, then the check of every stream (auth, a page, mapping).
  const loaded = await loadDefinition(file, process.env);
  const left = loaded.errors.map(formatDefinitionError);
  const checks = loaded.definition
    ? await checkPartner({ clock: commandClock(globals), logger: createLogger({ redact: createRedactor(loaded.definition.secrets), level: 'error' }), redact: createRedactor(loaded.definition.secrets), validator: specValidator(), todos: false }, loaded.definition)
    : [];
  const failing = checks.filter((c) => !c.ok).map((c) => `${c.stream}: ${c.detail}`);
  if (globals.json) {
    io.out(JSON.stringify({ file, todos: draft.todos, mapping: draft.mapping, ...(found.kind === 'rest' ? { paging: Object.fromEntries(found.entities.map((e) => [e.entity, e.pagination])) } : {}), definition_errors: left, check: checks }));
  } else {
    io.out(`wrote ${file}`);
    if (found.kind === 'rest') for (const e of found.entities) io.out(`paging ${e.entity}: ${pagingText(e.pagination)}${e.pagination.evidence ? `: ${e.pagination.evidence}` : ''}`);
    for (const todo of draft.todos) io.out(`TODO ${todo}`);
    for (const e of left) io.out(`FAIL ${e}`);
    for (const c of checks) io.out(`${c.ok ? 'ok  ' : 'FAIL'} check ${c.stream}: ${c.detail}`);
    io.out(left.length + failing.length === 0 ? `the draft passes check; ${draft.todos.length} TODO(s) to review` : `the draft does not pass check yet: ${left.length + failing.length} problem(s) above, ${draft.todos.length} TODO(s)`);
  }
  return EXIT_OK;
}

/** `reconcile <partner> [--from D --to D] [--stream S] [--sample N] [--seed S]`: exit 1 on any difference. */
export async function reconcileCommand(globals: GlobalOptions, args: { partner: string; from?: string; to?: string; stream?: Entity; sample?: number; seed?: number; apply?: boolean }, io: Io): Promise<number> {
  const config = await loadConfig(globals);
  const def = partnerDefinition(config, args.partner);
  return withStore(globals, async (store) => {
    const yesterday = new Date(store.clock().getTime() - 86_400_000).toISOString().slice(0, 10);
    const to = args.to ?? yesterday;
    const from = args.from ?? new Date(Date.parse(`${to}T00:00:00Z`) - 6 * 86_400_000).toISOString().slice(0, 10);
    for (const [flag, value] of [['--from', from], ['--to', to]] as const) if (!DATE.test(value)) throw new CliError(`${flag} must be a date YYYY-MM-DD, got ${JSON.stringify(value)}`, EXIT_USAGE);
    if (from > to) throw new CliError(`--from ${from} is after --to ${to}`, EXIT_USAGE);
    for (const [flag, value] of [['--sample', args.sample], ['--seed', args.seed]] as const) {
      if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) throw new CliError(`${flag} must be a whole number ≥ 0, got ${JSON.stringify(String(value))}`, EXIT_USAGE);
    }
    let result;
    try {
      result = await reconcile({ store, clock: store.clock, logger: config.logger, redact: config.redact }, def, from, to, args.stream, { ...(args.sample !== undefined ? { sample: args.sample } : {}), ...(args.seed !== undefined ? { seed: args.seed } : {}) });
    } catch (error) {
      throw new CliError(`reconcile failed: ${config.redact((error as Error).message)}`, EXIT_FAILURE, { cause: error });
    }
    // --apply: what this scan and the one before agree the source no longer has becomes deletes.
    const inferred = args.apply ? await inferDeletes(await cliLoader(globals, io, store, config.logger, def), def, result) : undefined;
    if (globals.json) io.out(JSON.stringify(inferred ? { ...result, deletes: inferred } : result));
    else io.out([...reconciliationLines(result), ...(inferred ? inferredLines(inferred) : [])].join('\n'));
    return result.ok ? EXIT_OK : EXIT_FAILURE;
  });
}

/** `onboard <partner> [--backfill-days N]`: verifies the go-live checklist, keeps it in the store; exit 0 once live. */
export async function onboardCommand(globals: GlobalOptions, args: { partner: string; backfillDays?: number }, io: Io): Promise<number> {
  const days = args.backfillDays ?? 30;
  if (!Number.isInteger(days) || days < 1) throw new CliError(`--backfill-days must be a whole number ≥ 1, got ${args.backfillDays}`, EXIT_USAGE);
  const config = await loadConfig(globals);
  const def = partnerDefinition(config, args.partner);
  return withStore(globals, async (store) => {
    const results = await verifyChecklist({ store, clock: store.clock, logger: config.logger, redact: config.redact }, def, days);
    const saved = await saveChecklist(store.knex, def.partner, results, store.now());
    if (globals.json) io.out(JSON.stringify({ partner: def.partner, items: saved }));
    else for (const r of saved) io.out(`${r.ok ? '[x]' : '[ ]'} ${r.item}: ${r.detail}`);
    return saved.every((r) => r.ok) ? EXIT_OK : EXIT_FAILURE;
  });
}
