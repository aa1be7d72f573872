import { importFile, importFiles, type ImportSummary } from '../../../jobs/import-file.js';
import { cliLoader } from '../loader.js';
import { declaredValue } from '../../config/load-definitions.js';
import { loadConfig } from '../definitions.js';
import { personalData, policyProblems, type PersonalData, type PersonalDataPolicy } from '../../spec/personal-data.js';
import { createLogger } from '../../log.js';
import type { Entity, Variant } from '../../types.js';
import { withStore, type GlobalOptions } from '../context.js';
import { CliError, EXIT_OK, EXIT_USAGE, type Io } from '../io.js';
import { formatTable } from '../table.js';

const SHOWN_REJECTS = 20;

export interface ImportArgs {
  partner: string;
  variant: Variant;
  /** `--entity E FILE`: one file of one entity. */
  entity?: Entity;
  file?: string;
  /** `--customers F --transactions F --activity F`: one file an entity, loaded together. */
  files?: readonly { entity: Entity; file: string }[];
}

const TOGETHER_USAGE = '--customers, --transactions and/or --activity FILE';

/**
 * `import`: one file (`--entity E FILE`), or a file an entity (`--customers F --transactions F
 * --activity F`) loaded as one bulk load whose after-load jobs are evaluated once, at its end
 * (importFiles). The second form prints one summary a file (`--json`: an array of them).
 */
export async function importCommand(globals: GlobalOptions, args: ImportArgs, io: Io): Promise<number> {
  const files = args.files ?? [];
  if (args.entity !== undefined && files.length > 0) throw new CliError(`import: give either --entity E FILE or ${TOGETHER_USAGE}, not both`, EXIT_USAGE);
  if (args.entity !== undefined && args.file === undefined) throw new CliError(`import: --entity ${args.entity} needs a FILE (or - for stdin)`, EXIT_USAGE);
  if (args.entity === undefined && args.file !== undefined) throw new CliError(`import: FILE ${args.file} needs --entity E (or give ${TOGETHER_USAGE} instead)`, EXIT_USAGE);
  if (args.entity === undefined && files.length === 0) throw new CliError(`import: give --entity E FILE, or ${TOGETHER_USAGE}`, EXIT_USAGE);
  if (files.filter((f) => f.file === '-').length > 1) throw new CliError('import: stdin (-) can be the file of one entity only', EXIT_USAGE);
  const personalData = await definedPolicy(globals, args.partner);
  return withStore(globals, async (store) => {
    const loader = await cliLoader(globals, io, store, createLogger({ level: process.env.LOG_LEVEL ?? 'warn' }), args);
    if (args.entity !== undefined) {
      const summary = await importFile({ store, loader }, { partner: args.partner, variant: args.variant, entity: args.entity, file: args.file!, stdin: io.stdin, personalData });
      if (globals.json) io.out(JSON.stringify(summaryJson(args, summary)));
      else printSummary(io, args, summary);
      return EXIT_OK;
    }
    // The table prints each file's line as its import ends; the jobs' evaluation comes after the last.
    const imported = globals.json ? undefined : (s: ImportSummary) => printSummary(io, args, s);
    const summaries = await importFiles({ store, loader }, { partner: args.partner, variant: args.variant, files, stdin: io.stdin, imported, personalData });
    if (globals.json) io.out(JSON.stringify(summaries.map((s) => summaryJson(args, s))));
    return EXIT_OK;
  });
}

/**
 * The personal-data policy of the partner's connector definition, when it has one (an import of a
 * partner without a definition keeps the fields). A definition that does not load here (its
 * source's secrets live in the worker's environment) still states its policy, read alone; a policy
 * that cannot be applied (a `hash` without its key) stops the import, exit 2, naming file and path.
 */
async function definedPolicy(globals: GlobalOptions, partner: string): Promise<PersonalData | undefined> {
  const config = await loadConfig(globals);
  const def = config.definitions.find((d) => d.partner === partner);
  if (def) return def.personal_data;
  const file = config.invalid.find((d) => d.partner === partner)?.file;
  if (file === undefined) return undefined;
  const policy = declaredValue(file, 'personal_data');
  const problems = policyProblems(policy, process.env);
  if (problems.length > 0) throw new CliError(`import: the personal-data policy of partner ${partner} cannot be applied:\n${problems.map((p) => `  ${file}: ${p.path}: ${p.message}`).join('\n')}`, EXIT_USAGE);
  return personalData(policy as PersonalDataPolicy | undefined, process.env);
}

function summaryJson(args: ImportArgs, summary: ImportSummary): Record<string, unknown> {
  const c = summary.counts;
  return {
    partner: args.partner, variant: args.variant, entity: summary.entity, file: summary.file, run_id: summary.runId,
    total: c.pulled, loaded: c.loaded, rejected: c.rejected, waiting: c.waiting, stale: c.stale, released: c.released, erased: c.erased, distinct: summary.distinct,
    rejects: summary.rejects.flatMap((r) => r.errors.map((e) => ({ line: r.position, ...e }))),
  };
}

function printSummary(io: Io, args: ImportArgs, summary: ImportSummary): void {
  const c = summary.counts;
  io.out(`${args.partner} ${args.variant}/${summary.entity} from ${summary.file}: ${c.pulled} records, ` +
    `${c.loaded} loaded${repeatedNote(c.valid, summary.distinct)}, ${c.rejected} rejected, ${c.waiting} waiting for their customer` +
    (c.stale > 0 ? `, ${c.stale} stale (older than the version stored, not applied)` : '') +
    (c.released > 0 ? `, ${c.released} earlier waiting records released` : '') +
    (c.erased > 0 ? `, ${c.erased} of erased customers loaded without their personal fields` : '') + ` (run ${summary.runId})`);
  if (summary.rejects.length > 0) {
    const rows = summary.rejects.slice(0, SHOWN_REJECTS).flatMap((r) => r.errors.map((e) => [r.position, e.field, e.rule, e.message]));
    io.out(formatTable(['LINE', 'FIELD', 'RULE', 'MESSAGE'], rows).replace(/^/gm, '  '));
    if (summary.rejects.length > SHOWN_REJECTS) io.out(`  ... and ${summary.rejects.length - SHOWN_REJECTS} more rejected records (kept in the store's rejects)`);
  }
}

/** ` (8 distinct records; 2 repeated in the file: last version kept)` when the file repeats records; else nothing. */
function repeatedNote(valid: number, distinct: number): string {
  const repeated = valid - distinct;
  return repeated > 0 ? ` (${distinct} distinct records; ${repeated} repeated in the file: last version kept)` : '';
}
