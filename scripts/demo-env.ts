/**
 * The environment the demo's example definitions read (config/partners/*.yaml take the sandbox's
 * client secret and the stand-in databases' URLs from variables), and the `serve` line the demo
 * ends with. A console started later, from another shell, loads the same definitions and needs the
 * same variables, or every demo partner reads as an invalid definition: so the line sets, in
 * front of the command, each variable the demo set itself. Those are the demo's own values (the
 * sandbox's published demo credential, paths of the local stand-in files under data/), never a
 * value the user had set: such a variable is inherited by the command as it is, and not printed.
 * Nothing is written into the repository's files.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { packageRoot } from '../src/paths.js';
import { DEFAULT_CLIENT_SECRET } from '../src/sandbox/oauth.js';

/** The demo's store, under the folder the demo runs in (data/ is not part of the repository). */
export const DEMO_STORE_FILE = join('data', 'demo.sqlite');


/** The stand-ins for a prop firm's replica and a casino's warehouse: variable, file under `dir`, seed under samples/. */
const STAND_INS: readonly [string, string, string][] = [
  ['REPLICA_PROP_URL', join('data', 'replica-prop.sqlite'), join('samples', 'replica', 'prop-replica.sql')],
  ['WAREHOUSE_CASINO_URL', join('data', 'warehouse-casino.sqlite'), join('samples', 'warehouse', 'casino-warehouse.sql')],
];

/**
 * Sets in `env` what the example definitions need and `env` lacks: the sandbox secret, and for
 * each stand-in database a SQLite file under `dir`/data seeded afresh from samples/ (a relative
 * `sqlite:data/...` URL: the demo's commands run in `dir`). Returns the variables it set.
 */
export function prepareDemoEnvironment(dir: string, env: NodeJS.ProcessEnv): Record<string, string> {
  const assigned: Record<string, string> = {};
  // The sandbox partner's published demo credential (what `partner-sync sandbox` accepts): no one's secret.
  if (!env.SANDBOX_CLIENT_SECRET) assigned.SANDBOX_CLIENT_SECRET = DEFAULT_CLIENT_SECRET;
  mkdirSync(join(dir, 'data'), { recursive: true });
  for (const [variable, file, seed] of STAND_INS) {
    if (env[variable]) continue;
    for (const suffix of ['', '-wal', '-shm']) rmSync(join(dir, file + suffix), { force: true });
    const db = new Database(join(dir, file));
    try {
      db.exec(readFileSync(join(packageRoot(), seed), 'utf8'));
    } finally {
      db.close();
    }
    assigned[variable] = `sqlite:${file.split('\\').join('/')}`;
  }
  Object.assign(env, assigned);
  return assigned;
}

/** A word as a POSIX shell reads it back unchanged. */
function shellWord(text: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(text) ? text : `'${text.split("'").join(`'\\''`)}'`;
}

/**
 * `VAR=value ... node bin/partner-sync.js --store URL serve`: the console on the demo's store, with
 * the definitions' variables, run from the folder the demo ran in (its paths are relative to it) by
 * the checkout's own launcher, which needs nothing on the PATH.
 */
export function serveLine(storeUrl: string, assigned: Readonly<Record<string, string>>): string {
  const assignments = Object.entries(assigned).map(([name, value]) => `${name}=${shellWord(value)}`);
  return [...assignments, 'node', 'bin/partner-sync.js', '--store', shellWord(storeUrl), 'serve'].join(' ');
}
