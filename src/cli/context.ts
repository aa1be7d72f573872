import { userInfo } from 'node:os';
import { processClock, type Clock } from '../kernel/clock.js';
import { openStore, StoreOpenError, type Store } from '../store/store.js';
import { CliError, EXIT_FAILURE, EXIT_USAGE } from './io.js';

/** Options every command accepts (design.md, Command line). */
export interface GlobalOptions {
  config: string;
  store?: string;
  json?: boolean;
  /** The process's clock (main takes it once, from processClock); a test in-process passes its own. */
  clock?: Clock;
}

/** The clock a command reads the time from: the one it was given, else the process's. */
export function commandClock(globals: Pick<GlobalOptions, 'clock'>): Clock {
  return globals.clock ?? processClock();
}

/** Opens the store named by --store or STORE_URL (default: the embedded SQLite file), runs `work`, closes it. */
export async function withStore<T>(globals: GlobalOptions, work: (store: Store) => Promise<T>, options: { migrate?: boolean } = {}): Promise<T> {
  const url = globals.store ?? process.env.STORE_URL;
  let store: Store;
  try {
    store = await openStore({ url, migrate: options.migrate, clock: commandClock(globals) });
  } catch (error) {
    // A store URL that cannot be understood is bad configuration (2); a store named well that
    // fails to open or migrate is a runtime failure (1), like any other (design.md, exit codes).
    throw new CliError((error as Error).message, error instanceof StoreOpenError ? EXIT_FAILURE : EXIT_USAGE, { cause: error });
  }
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/** Who runs the command (the OS user), for the audit fields of what it changes by hand. */
export function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? process.env.USERNAME ?? 'unknown';
  }
}
