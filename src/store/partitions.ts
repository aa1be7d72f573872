/**
 * Monthly partitions of the activity tables (PostgreSQL; migration 013). Each of
 * `gaming_activity` and `trading_activity` is a table partitioned by RANGE (date) with one
 * partition per UTC month, `<table>_pYYYYMM` covering [first day, first day of the next month).
 * A row whose month has no partition would be refused by the server, so partitions are made:
 * - ahead, by the worker (`ensureMonthsAhead`: this month and the next ones), in short
 *   transactions of their own;
 * - on demand, by a load that meets a month without one (`MonthPartitions.ensure`, inside the
 *   load transaction: creating a partition locks the parent table until that transaction ends, so
 *   the worker's creation ahead is what keeps that rare).
 * Each creation holds a transaction lock of its partition's name, so two of them meeting the same
 * month take turns instead of the second failing.
 * A default partition catches the rows of a month without one written by something that does
 * not ask for partitions (a COPY straight into the table by a tool or a benchmark); creating the
 * month's partition later moves them into it. SQLite keeps plain tables; everything here is a
 * no-op there.
 */
import type { Knex } from 'knex';
import type { Store } from './store.js';
import { transactionLock } from './transaction-lock.js';

/** The tables partitioned by month on PostgreSQL. */
export const PARTITIONED_TABLES = ['gaming_activity', 'trading_activity'] as const;

const MONTH = /^(\d{4})-(\d{2})/;

/** `YYYY-MM` of a date or date-time text. */
export function monthOf(date: string): string {
  const m = MONTH.exec(date);
  if (!m) throw new Error(`not a date: ${date}`);
  return `${m[1]}-${m[2]}`;
}

/** The month after `YYYY-MM`. */
export function nextMonth(month: string): string {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return m === 12 ? `${y + 1}-01` : `${y}-${String(m + 1).padStart(2, '0')}`;
}

export const partitionName = (table: string, month: string): string => `${table}_p${month.replace('-', '')}`;

/** Whether the store's table is partitioned (PostgreSQL after migration 013). */
export async function isPartitioned(knex: Knex | Knex.Transaction, table: string): Promise<boolean> {
  const { rows } = (await knex.raw(
    `SELECT 1 FROM pg_partitioned_table p JOIN pg_class c ON c.oid = p.partrelid
      WHERE c.relname = ? AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())`,
    [table],
  )) as { rows: unknown[] };
  return rows.length > 0;
}

/** The months that have a partition. */
export async function partitionMonths(knex: Knex | Knex.Transaction, table: string): Promise<Set<string>> {
  const { rows } = (await knex.raw(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
      WHERE p.relname = ? AND p.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())`,
    [table],
  )) as { rows: { name: string }[] };
  const months = new Set<string>();
  const suffix = new RegExp(`^${table}_p(\\d{4})(\\d{2})$`);
  for (const r of rows) {
    const m = suffix.exec(r.name);
    if (m) months.add(`${m[1]}-${m[2]}`);
  }
  return months;
}

export const defaultPartitionName = (table: string): string => `${table}_default`;

/**
 * Creates the month's partition unless it exists. Rows of that month written meanwhile by a
 * writer that does not ask for partitions (a COPY straight into the table) sit in the default
 * partition: they move into the new one, which is then attached (attaching checks that the
 * default holds none of its rows any more).
 */
export async function createMonthPartition(knex: Knex | Knex.Transaction, table: string, month: string): Promise<void> {
  if (!/^\d{4}-\d{2}$/.test(month)) throw new Error(`not a month: ${month}`);
  // Its statements commit together (a partition is never left made but not attached).
  if (!(knex as Knex.Transaction).isTransaction) return knex.transaction((trx) => createMonthPartition(trx, table, month));
  const name = partitionName(table, month);
  // Two transactions meeting the same new month (two processes, or a load and the worker's upkeep)
  // take turns: the second waits until the first ends, then finds its partition made (or, if the
  // first rolled back, makes it). Without this the second one's CREATE fails.
  await transactionLock(knex as Knex.Transaction, `partition:${name}`);
  const { rows } = (await knex.raw('SELECT to_regclass(?) AS own, to_regclass(?) AS fallback', [name, defaultPartitionName(table)])) as { rows: { own: string | null; fallback: string | null }[] };
  if (rows[0]?.own) return;
  // DDL takes no bind parameters: the bounds are literals of a checked month.
  const range = `FROM ('${month}-01') TO ('${nextMonth(month)}-01')`;
  if (!rows[0]?.fallback) {
    await knex.raw(`CREATE TABLE ?? PARTITION OF ?? FOR VALUES ${range}`, [name, table]);
    return;
  }
  await knex.raw('CREATE TABLE ?? (LIKE ?? INCLUDING DEFAULTS)', [name, table]);
  await knex.raw(`WITH moved AS (DELETE FROM ?? WHERE date >= '${month}-01' AND date < '${nextMonth(month)}-01' RETURNING *) INSERT INTO ?? SELECT * FROM moved`, [defaultPartitionName(table), name]);
  await knex.raw(`ALTER TABLE ?? ATTACH PARTITION ?? FOR VALUES ${range}`, [table, name]);
}

/**
 * The partitions a process knows exist, per table: a load asks for the months of its rows and
 * only a month not seen yet costs a query. Partitions are never dropped by the service, so what
 * was seen stays true (a month's partition dropped by hand is recreated on the next miss of the
 * server, not here).
 */
export class MonthPartitions {
  private readonly known = new Map<string, Set<string>>();
  private partitioned: Promise<boolean> | undefined;

  constructor(private readonly store: Store) {}

  /** Whether the activity tables are partitioned in this store (asked once). */
  private enabled(trx: Knex.Transaction): Promise<boolean> {
    if (!this.store.dialect.partitions) return Promise.resolve(false);
    this.partitioned ??= isPartitioned(trx, 'gaming_activity');
    return this.partitioned;
  }

  /** Makes sure every month of `dates` has its partition of `table`, inside the caller's transaction. */
  async ensure(trx: Knex.Transaction, table: string, dates: Iterable<string>): Promise<void> {
    let known = this.known.get(table);
    let missing: Set<string> | undefined;
    let last = '';
    for (const date of dates) {
      // Rows come a day at a time: most dates share the previous one's month.
      if (date.startsWith(last) && last !== '') continue;
      const month = monthOf(date);
      last = month;
      if (known?.has(month)) continue;
      (missing ??= new Set()).add(month);
    }
    if (!missing || !(await this.enabled(trx))) return;
    if (!known) this.known.set(table, (known = await partitionMonths(trx, table)));
    for (const month of missing) {
      if (known.has(month)) continue;
      await createMonthPartition(trx, table, month);
      known.add(month);
    }
  }

  /** Forgets what was seen (a transaction that created partitions rolled back). */
  forget(): void {
    this.known.clear();
  }
}

/**
 * The worker's creation ahead: this month's and the next `months` months' partitions of every
 * partitioned table, each in its own short transaction. Resolves with the partitions created.
 */
export async function ensureMonthsAhead(store: Store, today: string, months = 2): Promise<string[]> {
  if (!store.dialect.partitions) return [];
  const created: string[] = [];
  for (const table of PARTITIONED_TABLES) {
    if (!(await isPartitioned(store.knex, table))) continue;
    const have = await partitionMonths(store.knex, table);
    let month = monthOf(today);
    for (let i = 0; i <= months; i++, month = nextMonth(month)) {
      if (have.has(month)) continue;
      await createMonthPartition(store.knex, table, month);
      created.push(partitionName(table, month));
    }
  }
  return created;
}

/** The clock and one-shot timers the upkeep runs on (the worker's). */
export interface UpkeepTimers {
  now(): Date;
  setTimeout(fn: () => void, ms: number): { readonly id: unknown };
  clearTimeout(handle: { readonly id: unknown }): void;
}

const UPKEEP_INTERVAL_MS = 6 * 3600 * 1000;

/**
 * The worker's partition upkeep: `ensureMonthsAhead` at once and every 6 hours, so a month's
 * partitions exist weeks before its first row. A failure is reported and retried at the next turn.
 */
export function keepMonthsAhead(store: Store, timers: UpkeepTimers, report: (created: string[], error?: Error) => void): { stop(): Promise<void> } {
  let handle: { readonly id: unknown } | undefined;
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  const turn = (): void => {
    running = ensureMonthsAhead(store, timers.now().toISOString())
      .then((created) => report(created), (error: unknown) => report([], error as Error))
      .finally(() => {
        if (!stopped) handle = timers.setTimeout(turn, UPKEEP_INTERVAL_MS);
      });
  };
  turn();
  return {
    async stop() {
      stopped = true;
      if (handle) timers.clearTimeout(handle);
      await running;
    },
  };
}
