/**
 * What a migration is. Its own file, so that each migration and the ordered list (index.ts) import
 * it without importing each other. A migration imports only knex, this folder and src/kernel: a
 * later change elsewhere must not change what an old migration does on a store that has not run it.
 */
import type { Knex } from 'knex';
import type { DialectProfile } from '../dialects.js';

export interface StoreMigration {
  name: string;
  up(knex: Knex, profile: DialectProfile): Promise<void>;
}
