/**
 * Volume, the pull face, on the sqlite store (the test: ./pull-month.ts). The suite runs the
 * month once per store and once per face (import on SQLite, pull on PostgreSQL) to stay within its
 * time; VOLUME_ALL=1 runs this pair too (every face on every store).
 */
import { describePullMonth } from './pull-month.js';

if (process.env.VOLUME_ALL === '1') describePullMonth('sqlite');
else describe.skip('a month of 5000 customers by pull (sqlite): set VOLUME_ALL=1 to run it', () => { it('runs with VOLUME_ALL=1'); });
