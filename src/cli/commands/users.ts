import { createInterface } from 'node:readline';
import { addUser, generatePassword, isRole, ROLES, UserError } from '../../access/console-users.js';
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
 * `users add <name> --role operator|manager`: a web console user. The password comes from
 * PARTNER_SYNC_USER_PASSWORD, else is asked on a terminal, else is generated and printed once.
 * Only a salted scrypt hash is stored.
 */
export async function usersAddCommand(globals: GlobalOptions, args: { name: string; role: string }, io: Io, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  if (!isRole(args.role)) throw new CliError(`--role must be one of ${ROLES.join(', ')}, got ${JSON.stringify(args.role)}`, EXIT_USAGE);
  let password = env.PARTNER_SYNC_USER_PASSWORD;
  let generated = false;
  if (password === undefined || password === '') {
    if (process.stdin.isTTY && io.isTty) password = await promptHidden(`password for ${args.name} (at least 10 characters): `);
    else {
      password = generatePassword();
      generated = true;
    }
  }
  return withStore(globals, async (store) => {
    try {
      const user = await addUser(store, args.name, args.role as typeof ROLES[number], password);
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
