import { join } from 'node:path';
import { checkPartner, type StreamCheck } from '../../../jobs/check-partner.js';
import { loadAlertConfig } from '../../alerts/config.js';
import { defaultConfig, formatFraudConfigError, loadFraudConfig, settingsFor } from '../../fraud/config.js';
import { identityPolicyWarnings } from '../../fraud/identity.js';
import { specValidator } from '../../spec/validator.js';
import { commandClock, type GlobalOptions } from '../context.js';
import { loadConfig } from '../definitions.js';
import { formatDefinitionError } from '../../config/load-definitions.js';
import { CliError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, type Io } from '../io.js';

const stem = (file: string) => file.replace(/^.*[\\/]/, '').replace(/\.ya?ml$/i, '');

/**
 * `check [--partner P]`: definitions valid (every error, with file, path and reason), then per
 * stream: auth, one page read, its records valid after mapping. Exit 2 when a definition is
 * invalid (bad configuration), 1 when a partner check fails, 0 when all pass.
 */
export async function checkCommand(globals: GlobalOptions, args: { partner?: string }, io: Io): Promise<number> {
  const config = await loadConfig(globals);
  const errors = config.errors.filter((e) => !args.partner || stem(e.file) === args.partner);
  const defs = config.definitions.filter((d) => !args.partner || d.partner === args.partner);
  if (args.partner && defs.length === 0 && errors.length === 0) {
    throw new CliError(`no connector definition for partner ${args.partner} in ${config.dir}`, EXIT_USAGE);
  }
  // The fraud rules (config/fraud.yaml) are configuration too: their errors make a bad configuration.
  const fraud = await loadFraudConfig(join(globals.config, 'fraud.yaml'));
  // Where the worker's alerts go (config/alerts.yaml): a wrong file or a channel's unset variable is a bad configuration too.
  const alertErrors = (await loadAlertConfig(join(globals.config, 'alerts.yaml'), process.env)).errors;
  const fraudErrors = [...fraud.errors.map(formatFraudConfigError), ...alertErrors];
  // What a partner's personal-data policy leaves the fraud rules unable to match: warned, not failed.
  const warnings = defs.flatMap((d) => identityPolicyWarnings(d.personal_data?.policy, settingsFor(fraud.config ?? defaultConfig(), d.partner).duplicate_identity).map((message) => ({ partner: d.partner, message })));
  const checks: StreamCheck[] = [];
  for (const def of defs) {
    checks.push(...(await checkPartner({ clock: commandClock(globals), logger: config.logger, redact: config.redact, validator: specValidator() }, def)));
  }
  if (globals.json) {
    io.out(JSON.stringify({ ok: errors.length === 0 && fraudErrors.length === 0 && checks.every((c) => c.ok), definition_errors: errors, fraud_errors: fraud.errors, alert_errors: alertErrors, warnings, streams: checks }));
  } else {
    for (const e of errors) io.out(`FAIL ${formatDefinitionError(e)}`);
    for (const e of fraudErrors) io.out(`FAIL ${e}`);
    for (const w of warnings) io.out(`WARN ${w.partner}: ${w.message}`);
    for (const c of checks) io.out(`${c.ok ? 'ok  ' : 'FAIL'} ${c.partner} ${c.stream}: ${c.detail}`);
    if (errors.length === 0 && checks.length === 0) io.out(`no connector definitions in ${config.dir}`);
  }
  if (errors.length > 0 || fraudErrors.length > 0) return EXIT_USAGE;
  return checks.every((c) => c.ok) ? EXIT_OK : EXIT_FAILURE;
}
