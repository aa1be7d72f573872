/**
 * `partner-sync customers erase PARTNER CUSTOMER_ID... [--file F]`: erases the personal data of
 * customers everywhere in the store, the money kept (src/privacy/erase.ts), and remembers them so
 * that a later load drops their personal fields; `customers erasures [PARTNER]` lists what was
 * erased, by whom and when, never the values (docs/personal-data.md).
 */
import { readFile } from 'node:fs/promises';
import { eraseCustomers } from '../../privacy/erase.js';
import { listErasures } from '../../store/erasures.js';
import { osUser, withStore, type GlobalOptions } from '../context.js';
import { CliError, EXIT_OK, EXIT_USAGE, type Io } from '../io.js';
import { formatTable } from '../table.js';

export interface EraseArgs {
  partner: string;
  customers: string[];
  /** A file of customer ids, one a line (`#` comments and blank lines ignored). */
  file?: string;
}

export async function customersEraseCommand(globals: GlobalOptions, args: EraseArgs, io: Io): Promise<number> {
  const ids = [...args.customers];
  if (args.file !== undefined) {
    let text: string;
    try {
      text = await readFile(args.file, 'utf8');
    } catch (error) {
      throw new CliError(`customers erase: cannot read --file ${args.file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, EXIT_USAGE);
    }
    for (const line of text.split(/\r?\n/)) {
      const id = line.replace(/#.*$/, '').trim();
      if (id !== '') ids.push(id);
    }
  }
  if (ids.length === 0) throw new CliError('customers erase: give the customer ids, or --file with one a line', EXIT_USAGE);
  return withStore(globals, async (store) => {
    const started = performance.now();
    const results = await eraseCustomers(store, { partner: args.partner, customers: ids, by: osUser(), via: 'cli' });
    const seconds = (performance.now() - started) / 1000;
    if (globals.json) {
      io.out(JSON.stringify({ partner: args.partner, erased: results.map((r) => ({ customer_id: r.customerId, found: r.found, tables: r.tables })), seconds: Number(seconds.toFixed(3)) }));
      return EXIT_OK;
    }
    for (const r of results) {
      const touched = Object.entries(r.tables).filter(([, n]) => n > 0).map(([t, n]) => `${t} ${n}`).join(', ') || 'no row held a personal value';
      io.out(`${args.partner} ${r.customerId}: ${r.found ? 'erased' : 'not in the store; remembered'} (${touched})`);
    }
    io.out(`${results.length} customer(s) erased in ${seconds.toFixed(2)} s; a later load of them keeps no personal field (partner-sync customers erasures ${args.partner})`);
    return EXIT_OK;
  });
}

export async function customersErasuresCommand(globals: GlobalOptions, args: { partner?: string; customer?: string }, io: Io): Promise<number> {
  return withStore(globals, async (store) => {
    const erasures = await listErasures(store.knex, args);
    if (globals.json) {
      io.out(JSON.stringify(erasures.map((e) => ({ id: e.id, partner: e.partner, customer_id: e.customerId, requested_by: e.requestedBy, via: e.via, erased_at: e.erasedAt, tables: e.tables }))));
      return EXIT_OK;
    }
    if (erasures.length === 0) {
      io.out('no erasures');
      return EXIT_OK;
    }
    io.out(formatTable(['ID', 'PARTNER', 'CUSTOMER', 'BY', 'VIA', 'ERASED_AT', 'ROWS'],
      erasures.map((e) => [e.id, e.partner, e.customerId, e.requestedBy, e.via, e.erasedAt.slice(0, 19), Object.values(e.tables).reduce((a, b) => a + b, 0)])));
    return EXIT_OK;
  });
}
