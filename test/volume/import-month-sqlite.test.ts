/** Volume, the import face, on the sqlite store (the test: ./import-month.ts). */
import { describeImportMonth } from './import-month.js';

describeImportMonth('sqlite');
