import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A folder of definition files for one test; `remove()` deletes it. */
export interface DefinitionFolder {
  dir: string;
  write(name: string, text: string): string;
  remove(): void;
}

export function definitionFolder(): DefinitionFolder {
  const dir = mkdtempSync(join(tmpdir(), 'partner-sync-defs-'));
  return {
    dir,
    write(name, text) {
      const file = join(dir, name);
      writeFileSync(file, text);
      return file;
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The smallest valid definition of `partner`; `streams` replaces the default customers stream. */
export function minimalDefinition(partner: string, options: { auth?: string; streams?: string; variant?: string; extra?: string } = {}): string {
  const auth =
    options.auth ??
    `    type: oauth2_client_credentials
    client_id: client-1
    client_secret: \${TEST_SECRET}`;
  const streams =
    options.streams ??
    `  customers:
    path: /api/v1/igaming/customers
    incremental:
      cursor_field: last_modified_date
      from_param: modified_since`;
  return `partner: ${partner}
variant: ${options.variant ?? 'igaming'}
source:
  type: rest
  base_url: https://api.partner.example
  auth:
${auth}
streams:
${streams}
${options.extra ?? ''}`;
}

/** The smallest valid db-replica definition of `partner`; `source` adds lines to the source block, `streams` replaces the default customers stream. */
export function dbDefinition(partner: string, options: { source?: string; streams?: string; variant?: string; url?: string; extra?: string } = {}): string {
  const streams =
    options.streams ??
    `  customers:
    table: accounts
    cursor_column: updated_at
    tiebreak_column: account_id`;
  return `partner: ${partner}
variant: ${options.variant ?? 'prop-trading'}
source:
  type: db
  client: mysql
${options.url ?? '  url: ${TEST_DB_URL}'}
${options.source ?? ''}streams:
${streams}
${options.extra ?? ''}`;
}

/** The smallest valid warehouse definition of `partner`, like dbDefinition. */
export function warehouseDefinition(partner: string, options: { source?: string; streams?: string; variant?: string; url?: string } = {}): string {
  const streams =
    options.streams ??
    `  activity:
    view: dw_daily_gaming
    date_column: date`;
  return `partner: ${partner}
variant: ${options.variant ?? 'igaming'}
source:
  type: warehouse
  client: postgres
${options.url ?? '  url: ${TEST_WAREHOUSE_URL}'}
${options.source ?? ''}streams:
${streams}
`;
}
