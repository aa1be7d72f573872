/** Volume, the import face, on the postgres store (the test: ./import-month.ts). */
import { describeImportMonth } from './import-month.js';

describeImportMonth('postgres');
