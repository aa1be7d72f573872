/** Volume, the import face, on the sqlite store, the month's three files in one command (the test: ./import-month.ts). */
import { describeImportMonth } from './import-month.js';

describeImportMonth('sqlite', 'one command');
