/**
 * The postbacks commands' options; their code loads when one of them runs (./postbacks.ts).
 */
import { Option, type Command } from 'commander';
import { EVENT_KINDS } from '../../postbacks/events.js';
import type { GlobalOptions } from '../context.js';
import type { Io } from '../io.js';
import type { PostbacksAddOptions } from './postbacks.js';

type Globals = (cmd: Command) => GlobalOptions;
const STATES = ['pending', 'retrying', 'delivered', 'dead'];
const commands = () => import('./postbacks.js');

export function registerPostbackCommands(program: Command, io: Io, run: (work: Promise<number>) => Promise<void>, globals: Globals, integer: (name: string) => (value: string) => number): void {
  const json = () => new Option('--json', 'machine-readable output');
  const postbacks = program.command('postbacks').description("server-to-server notifications to affiliates' trackers: add, list, remove, test, log, replay");
  postbacks.command('add')
    .description('a postback: checks the URL and prints its signing secret once (needs POSTBACK_SECRET_KEY)')
    .requiredOption('--affiliate <id>', 'the affiliate whose events it sends')
    .option('--campaign <id>', "only this campaign's customers")
    .requiredOption('--events <kinds>', `comma-separated: ${EVENT_KINDS.join(', ')}`)
    .requiredOption('--url <url>', 'tracker URL; macros such as {click_id} {event} {amount} are filled, URL-encoded')
    .addOption(new Option('--method <method>', 'GET (macros in the URL) or POST (JSON body)').choices(['GET', 'POST']).default('GET'))
    .option('--include-personal', 'send first_name, last_name and email (off by default)')
    .option('--allow-private', 'allow a private, loopback or link-local destination (a tracker inside your network)')
    .option('--rate <n>', 'requests per second at most (default 10)', integer('--rate'))
    .addOption(json())
    .action((opts: PostbacksAddOptions, cmd: Command) => run(commands().then((m) => m.postbacksAddCommand(globals(cmd), opts, io))));
  postbacks.command('list').description('the postbacks (never their secrets)')
    .option('--affiliate <id>', 'only this affiliate').option('--removed', 'removed ones too').addOption(json())
    .action((opts: { affiliate?: string; removed?: boolean }, cmd: Command) => run(commands().then((m) => m.postbacksListCommand(globals(cmd), opts, io))));
  postbacks.command('remove').description('a postback: no new events; its unsent ones are not sent').argument('<id>', 'postback id').addOption(json())
    .action((id: string, _opts: unknown, cmd: Command) => run(commands().then((m) => m.postbacksRemoveCommand(globals(cmd), { id }, io))));
  postbacks.command('test').description('send one signed test event now; exit 1 unless the tracker answers 2xx').argument('<id>', 'postback id').addOption(json())
    .action((id: string, _opts: unknown, cmd: Command) => run(commands().then((m) => m.postbacksTestCommand(globals(cmd), { id }, io))));
  postbacks.command('log').description('delivery state per event, newest first')
    .option('--postback <id>', 'only this postback')
    .addOption(new Option('--state <state>', 'only events in this state').choices(STATES))
    .option('--customer <id>', 'only this customer')
    .option('--limit <n>', 'at most this many (default 50)', integer('--limit'))
    .addOption(json())
    .action((opts: { postback?: string; state?: string; customer?: string; limit?: number }, cmd: Command) => run(commands().then((m) => m.postbacksLogCommand(globals(cmd), opts, io))));
  postbacks.command('replay').description('make events due again (same event id): the named ones, or --dead ones')
    .argument('[event_ids...]', 'event ids')
    .option('--dead', 'every dead event (of --postback, if given)')
    .option('--postback <id>', 'only this postback')
    .addOption(json())
    .action((eventIds: string[], opts: { dead?: boolean; postback?: string }, cmd: Command) => run(commands().then((m) => m.postbacksReplayCommand(globals(cmd), { eventIds, ...opts }, io))));
}

