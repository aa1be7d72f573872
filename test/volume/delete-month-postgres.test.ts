/** Volume, deletes at the source, on the postgres store (the test: ./delete-month.ts). */
import { describeDeleteMonth } from './delete-month.js';

describeDeleteMonth('postgres');
