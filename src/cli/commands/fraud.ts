import { join } from 'node:path';
import { scanFraud } from '../../../jobs/fraud.js';
import { decideAndEvaluate } from '../../../jobs/fraud-decision.js';
import { evaluatePartner } from '../../../jobs/commission.js';
import { listPartners } from '../../store/partners.js';
import { createLogger } from '../../log.js';
import { commissionPlans } from './commissions.js';
import { formatFraudConfigError, loadFraudConfig, RULE_NAMES, type FraudConfig } from '../../fraud/config.js';
import { decisionsOf, DecisionError, getFlag, listFlags, type Decision, type Flag, type FlagStatus } from '../../fraud/flags.js';
import { osUser, withStore, type GlobalOptions } from '../context.js';
import { CliError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, type Io } from '../io.js';
import { formatTable } from '../table.js';

/** `<config>/fraud.yaml`: the rules, none when the file is absent, or a usage error listing every problem (exit 2). */
export async function fraudConfig(globals: GlobalOptions, options: { required?: boolean } = {}): Promise<FraudConfig | undefined> {
  const file = join(globals.config, 'fraud.yaml');
  const { config, errors } = await loadFraudConfig(file);
  if (errors.length > 0) throw new CliError(`the fraud rules are invalid:\n${errors.map((e) => '  ' + formatFraudConfigError(e)).join('\n')}`, EXIT_USAGE);
  if (!config && options.required) throw new CliError(`no fraud rules: ${file} does not exist`, EXIT_USAGE);
  return config;
}

const STATUSES = ['open', 'confirmed', 'dismissed'];

function flagJson(f: Flag): Record<string, unknown> {
  return { ...f, instance: JSON.parse(f.instance_key) as unknown };
}

const instanceText = (key: string): string => (JSON.parse(key) as string[]).join(' ');

/** `fraud list [--partner P] [--status S] [--rule R]`: the review queue's order, the largest commission held first (then severity, then id). */
export async function fraudListCommand(globals: GlobalOptions, args: { partner?: string; status?: string; rule?: string }, io: Io): Promise<number> {
  if (args.status !== undefined && !STATUSES.includes(args.status)) throw new CliError(`--status must be one of ${STATUSES.join(', ')}, got ${JSON.stringify(args.status)}`, EXIT_USAGE);
  if (args.rule !== undefined && !(RULE_NAMES as string[]).includes(args.rule)) throw new CliError(`--rule must be one of ${RULE_NAMES.join(', ')}, got ${JSON.stringify(args.rule)}`, EXIT_USAGE);
  return withStore(globals, async (store) => {
    const flags = await listFlags(store.knex, { partner: args.partner, status: args.status as FlagStatus | undefined, rule: args.rule, order: 'exposure' });
    if (globals.json) {
      io.out(JSON.stringify({ filter: args, flags: flags.map(flagJson) }));
      return EXIT_OK;
    }
    if (flags.length === 0) {
      io.out('no fraud flags' + (Object.values(args).some((v) => v !== undefined) ? ' for this filter' : ''));
      return EXIT_OK;
    }
    io.out(formatTable(
      ['ID', 'PARTNER', 'RULE', 'INSTANCE', 'AFFILIATE', 'SEVERITY', 'STATUS', 'CUSTOMERS', 'HELD USD', 'FIRST SEEN', 'LAST SEEN'],
      flags.map((f) => [f.id, f.partner_id, f.rule, instanceText(f.instance_key), f.affiliate_id ?? '-', f.severity, f.status + (f.unsupported_since ? ' (unsupported)' : ''),
        f.customers.length, f.held_usd, f.first_seen.slice(0, 19).replace('T', ' '), f.last_seen.slice(0, 19).replace('T', ' ')]),
    ));
    return EXIT_OK;
  });
}

function parseId(text: string): number {
  const id = Number(text);
  if (!Number.isInteger(id) || id <= 0) throw new CliError(`a flag id is a positive whole number, got ${JSON.stringify(text)}`, EXIT_USAGE);
  return id;
}

/** `fraud show <id>`: the flag, its customers, its evidence and its decisions. */
export async function fraudShowCommand(globals: GlobalOptions, args: { id: string }, io: Io): Promise<number> {
  const id = parseId(args.id);
  return withStore(globals, async (store) => {
    const flag = await getFlag(store.knex, id);
    if (!flag) throw new CliError(`no fraud flag ${id}`, EXIT_FAILURE);
    const decisions = await decisionsOf(store.knex, id);
    if (globals.json) {
      io.out(JSON.stringify({ ...flagJson(flag), decisions }));
      return EXIT_OK;
    }
    io.out(`flag ${flag.id}: ${flag.rule} (${flag.severity}) of partner ${flag.partner_id}, ${flag.status}`);
    io.out(`instance:   ${instanceText(flag.instance_key)}`);
    io.out(`affiliate:  ${flag.affiliate_id ?? '- (several)'}`);
    io.out(`customers:  ${flag.customers.join(', ')}`);
    io.out(`held:       ${flag.held_usd} USD of commission for review`);
    io.out(`first seen: ${flag.first_seen}`);
    io.out(`last seen:  ${flag.last_seen}`);
    if (flag.unsupported_since) io.out(`unsupported since ${flag.unsupported_since}: the data no longer shows this pattern (the flag and its decision stay)`);
    for (const d of decisions) io.out(`decision:   ${d.decision} by ${d.by} at ${d.at}: ${d.reason}`);
    io.out('evidence:');
    io.out(JSON.stringify(flag.evidence, null, 2).split('\n').map((l) => '  ' + l).join('\n'));
    return EXIT_OK;
  });
}

/** `fraud confirm|dismiss <id> --reason TEXT [--by NAME]` */
export async function fraudDecideCommand(globals: GlobalOptions, args: { id: string; decision: Decision; reason?: string; by?: string }, io: Io): Promise<number> {
  const id = parseId(args.id);
  if (args.reason === undefined || args.reason.trim() === '') throw new CliError(`fraud ${args.decision === 'confirmed' ? 'confirm' : 'dismiss'} needs --reason TEXT (why; kept for audit)`, EXIT_USAGE);
  const by = args.by ?? osUser();
  const plans = await commissionPlans(globals, io, { quiet: true });
  return withStore(globals, async (store) => {
    try {
      const flag = await decideAndEvaluate(store, plans, createLogger({ level: process.env.LOG_LEVEL ?? 'warn' }), { id, decision: args.decision, by, reason: args.reason! });
      if (globals.json) io.out(JSON.stringify(flagJson(flag)));
      else io.out(`flag ${flag.id} ${flag.status} by ${flag.decided_by} at ${flag.decided_at}: ${flag.customers.length} customer(s) re-evaluated for commission`);
      return EXIT_OK;
    } catch (error) {
      if (error instanceof DecisionError) throw new CliError(error.message, EXIT_FAILURE);
      throw error;
    }
  });
}

/**
 * `fraud scan [--partner P] [--from D]`; then the partners' commissions are evaluated, so the
 * flags it opened hold (and those it withdrew release) their commission at once, and the review
 * queue shows what each holds.
 */
export async function fraudScanCommand(globals: GlobalOptions, args: { partner?: string; from?: string }, io: Io): Promise<number> {
  if (args.from !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(args.from)) throw new CliError(`--from must be YYYY-MM-DD, got ${JSON.stringify(args.from)}`, EXIT_USAGE);
  const config = await fraudConfig(globals, { required: true });
  const plans = await commissionPlans(globals, io, { quiet: true });
  return withStore(globals, async (store) => {
    const results = await scanFraud(store, config!, args);
    const logger = createLogger({ level: process.env.LOG_LEVEL ?? 'warn' });
    for (const { partner, variant } of await listPartners(store.knex, args.partner)) await evaluatePartner(store, plans, partner, variant, `fraud-scan-${store.now()}`, logger);
    if (globals.json) {
      io.out(JSON.stringify({ filter: args, partners: results }));
      return EXIT_OK;
    }
    if (results.length === 0) io.out(args.partner ? `no partner ${args.partner} in the store` : 'no partners in the store');
    for (const r of results) io.out(`${r.partner}: ${r.customers} customers, ${r.findings} pattern instance(s): ${r.opened} opened, ${r.updated} updated, ${r.withdrawn} withdrawn, ${r.unsupported} decided no longer supported`);
    return EXIT_OK;
  });
}
