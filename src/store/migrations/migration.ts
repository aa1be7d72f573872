/**
 * What a migration is. Its own file, so that each migration and the ordered list (index.ts) import
 * it without importing each other. A migration imports only knex, this folder and src/kernel: a
 * later change elsewhere must not change what an old migration does on a store that has not run it.
 */
import type { Knex } from 'knex';
import type { DialectProfile } from '../dialects.js';
import type { Clock } from '../../kernel/clock.js';

export interface StoreMigration {
  name: string;
  /** `clock`: the store's, for the few that stamp or size by the date (never the machine's directly). */
  up(knex: Knex, profile: DialectProfile, clock: Clock): Promise<void>;
}
