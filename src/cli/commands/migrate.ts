import type { GlobalOptions } from '../context.js';
import { withStore } from '../context.js';
import { EXIT_OK, type Io } from '../io.js';

export async function migrateCommand(globals: GlobalOptions, io: Io): Promise<number> {
  return withStore(globals, async (store) => {
    const applied = await store.migrate();
    const current = await store.appliedMigrations();
    if (globals.json) io.out(JSON.stringify({ store: store.description, applied, current }));
    else if (applied.length === 0) io.out(`store ${store.description} is up to date (${current.at(-1) ?? 'no migrations'})`);
    else io.out(`store ${store.description}: applied ${applied.join(', ')}`);
    return EXIT_OK;
  }, { migrate: false });
}
