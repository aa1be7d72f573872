import { join } from 'node:path';
import { alertSecrets, loadAlertConfig } from '../../alerts/config.js';
import { AlertRouter } from '../../alerts/router.js';
import { createRedactor } from '../../config/redact.js';
import { createLogger } from '../../log.js';
import type { GlobalOptions } from '../context.js';
import { CliError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, type Io } from '../io.js';

/**
 * `alerts test CHANNEL`: one test message through a channel of config/alerts.yaml (or the
 * `webhook` channel ALERT_WEBHOOK_URL makes without the file), as the worker would send it.
 * Exit 0 when delivered, 1 when the channel failed (the reason, never its address), 2 for no
 * such channel or a wrong file.
 */
export async function alertsTestCommand(globals: GlobalOptions, args: { channel: string }, io: Io, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const file = join(globals.config, 'alerts.yaml');
  const loaded = await loadAlertConfig(file, env);
  if (loaded.errors.length > 0) throw new CliError(loaded.errors.join('\n'), EXIT_USAGE);
  if (!loaded.config) throw new CliError(`alerts test: no channel: write ${file} (docs/worker.md, Alerts), or set ALERT_WEBHOOK_URL`, EXIT_USAGE);
  const channel = loaded.config.channels.get(args.channel);
  if (!channel) throw new CliError(`alerts test: no channel named ${JSON.stringify(args.channel)}; channels: ${[...loaded.config.channels.keys()].join(', ')}`, EXIT_USAGE);
  const redact = createRedactor(alertSecrets(loaded.config));
  const router = new AlertRouter({ config: loaded.config, logger: createLogger({ level: env.LOG_LEVEL ?? 'warn', redact }), redact });
  try {
    const at = new Date();
    await router.test(args.channel, at);
    if (globals.json) io.out(JSON.stringify({ channel: args.channel, type: channel.type, delivered: true, at: at.toISOString() }));
    else io.out(`alerts test: a test message was delivered to ${args.channel} (${channel.type})`);
    return EXIT_OK;
  } catch (error) {
    const reason = redact((error as Error).message);
    if (globals.json) io.out(JSON.stringify({ channel: args.channel, type: channel.type, delivered: false, error: reason }));
    io.err(`partner-sync: alerts test: ${args.channel} (${channel.type}) failed: ${reason}`);
    return EXIT_FAILURE;
  } finally {
    router.close();
  }
}
