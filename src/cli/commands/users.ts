import { createInterface } from 'node:readline';
import { addUser, generatePassword, inviteUser, isRole, ROLES, UserError } from '../../access/console-users.js';
import { withStore, type GlobalOptions } from '../context.js';
import { CliError, EXIT_OK, EXIT_USAGE, type Io } from '../io.js';

/** Reads a line from the terminal without echoing it. */
function promptHidden(question: string): Promise<string> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    const out = rl as unknown as { _writeToOutput: (s: string) => void };
    process.stderr.write(question);
    out._writeToOutput = () => undefined;
    rl.question('', (answer) => {
      rl.close();
      process.stderr.write('\n');
      resolve(answer);
    });
  });
}

/**
 * `users add <name> --role operator|manager|affiliate [--affiliate ID ...] [--invite]`: a web
 * console user. Staff: the password comes from PARTNER_SYNC_USER_PASSWORD, else is asked on a
 * terminal, else is generated and printed once. An affiliate (and staff with --invite) gets a
 * one-time link, valid 7 days, to set their own password. Only a salted scrypt hash is stored.
 */
export async function usersAddCommand(globals: GlobalOptions, args: { name: string; role: string; affiliates?: string[]; invite?: boolean; consoleUrl?: string }, io: Io, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  if (!isRole(args.role)) throw new CliError(`--role must be one of ${ROLES.join(', ')}, got ${JSON.stringify(args.role)}`, EXIT_USAGE);
  const role = args.role;
  const invite = role === 'affiliate' || args.invite === true;
  const base = (args.consoleUrl ?? env.PARTNER_SYNC_CONSOLE_URL ?? '').trim().replace(/\/+$/, '');
  if (base !== '' && !/^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/.test(base)) throw new CliError(`--console-url: the console's address, http(s)://host[:port], got ${JSON.stringify(base)}`, EXIT_USAGE);
  let password = invite ? undefined : env.PARTNER_SYNC_USER_PASSWORD;
  let generated = false;
  if (!invite && (password === undefined || password === '')) {
    if (process.stdin.isTTY && io.isTty) password = await promptHidden(`password for ${args.name} (at least 10 characters): `);
    else {
      password = generatePassword();
      generated = true;
    }
  }
  return withStore(globals, async (store) => {
    try {
      if (invite) {
        const { user, token, expires } = await inviteUser(store, args.name, role, args.affiliates);
        const link = `${base}/console/invite/${token}`;
        if (globals.json) io.out(JSON.stringify({ name: user.name, role: user.role, ...(user.affiliates ? { affiliates: user.affiliates } : {}), invitation: link, expires }));
        else {
          io.out(`console user ${user.name} added (${user.role}${user.affiliates ? `: ${user.affiliates.join(', ')}` : ''})`);
          io.out(`invitation (one use, until ${expires}): ${link}`);
          io.out(base === '' ? "Prefix the console's address (or give --console-url); the link is shown only now." : 'The link is shown only now (the store keeps only a hash of it).');
        }
        return EXIT_OK;
      }
      const user = await addUser(store, args.name, role, password as string, undefined, args.affiliates);
      if (globals.json) io.out(JSON.stringify({ name: user.name, role: user.role, ...(generated ? { password } : {}) }));
      else {
        io.out(`console user ${user.name} added (${user.role})`);
        if (generated) io.out(`password: ${password}\nThe password is shown only now (the store keeps only a hash of it).`);
      }
      return EXIT_OK;
    } catch (error) {
      if (error instanceof UserError) throw new CliError(error.message, EXIT_USAGE);
      throw error;
    }
  });
}
