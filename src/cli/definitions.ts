import { join } from 'node:path';
import type { PartnerDefinition } from '../config/definition.js';
import { formatDefinitionError, loadDefinitions, type DefinitionError, type InvalidDefinition } from '../config/load-definitions.js';
import { createRedactor } from '../config/redact.js';
import { createLogger, type Logger, type Redact } from '../log.js';
import type { GlobalOptions } from './context.js';
import { CliError, EXIT_USAGE } from './io.js';

export interface LoadedConfig {
  dir: string;
  definitions: PartnerDefinition[];
  errors: DefinitionError[];
  /** The files that exist and cannot load: their streams are not pulled (status, the console). */
  invalid: InvalidDefinition[];
  redact: Redact;
  logger: Logger;
}

/** Reads every connector definition under `<config>/partners`; secrets of all of them feed one redactor. */
export async function loadConfig(globals: GlobalOptions): Promise<LoadedConfig> {
  const dir = join(globals.config, 'partners');
  const { definitions, errors, invalid } = await loadDefinitions(dir, process.env);
  const redact = createRedactor(definitions.flatMap((d) => d.secrets));
  const logger = createLogger({ redact, level: process.env.LOG_LEVEL ?? 'warn' });
  return { dir, definitions, errors, invalid, redact, logger };
}

const fileStem = (file: string): string => file.replace(/^.*[\\/]/, '').replace(/\.ya?ml$/i, '');

/** The definition of one partner, or a usage error naming what is wrong with it (exit 2). */
export function partnerDefinition(config: LoadedConfig, partner: string): PartnerDefinition {
  const own = config.errors.filter((e) => fileStem(e.file) === partner);
  if (own.length > 0) {
    throw new CliError(`the definition of partner ${partner} is invalid:\n` + own.map((e) => '  ' + formatDefinitionError(e)).join('\n'), EXIT_USAGE);
  }
  const def = config.definitions.find((d) => d.partner === partner);
  if (!def) {
    const known = config.definitions.map((d) => d.partner).join(', ') || 'none';
    throw new CliError(`no connector definition for partner ${partner} in ${config.dir} (defined: ${known})`, EXIT_USAGE);
  }
  return def;
}
