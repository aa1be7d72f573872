import { openStore, type Store } from '../store/store.js';
import { CliError, EXIT_USAGE } from './io.js';

/** Options every command accepts (design.md, Command line). */
export interface GlobalOptions {
  config: string;
  store?: string;
  json?: boolean;
}

/** Opens the store named by --store or STORE_URL (default: the embedded SQLite file), runs `work`, closes it. */
export async function withStore<T>(globals: GlobalOptions, work: (store: Store) => Promise<T>, options: { migrate?: boolean } = {}): Promise<T> {
  const url = globals.store ?? process.env.STORE_URL;
  let store: Store;
  try {
    store = await openStore({ url, migrate: options.migrate });
  } catch (error) {
    throw new CliError((error as Error).message, EXIT_USAGE, { cause: error });
  }
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}
