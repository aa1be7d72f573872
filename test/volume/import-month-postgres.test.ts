/** Volume, the import face, on the postgres store, as three commands of one file each (the test: ./import-month.ts). */
import { describeImportMonth } from './import-month.js';

describeImportMonth('postgres', 'three commands');
