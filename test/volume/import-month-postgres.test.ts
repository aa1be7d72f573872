/**
 * Volume, the import face, on the postgres store, as three commands of one file each (the test: ./import-month.ts). The suite runs the
 * month once per store and once per face (import on SQLite, pull on PostgreSQL) to stay within its
 * time; VOLUME_ALL=1 runs this pair too (every face on every store).
 */
import { describeImportMonth } from './import-month.js';

if (process.env.VOLUME_ALL === '1') describeImportMonth('postgres', 'three commands');
else describe.skip('a month of 5000 customers by import (postgres): set VOLUME_ALL=1 to run it', () => { it('runs with VOLUME_ALL=1'); });
