/** Volume, deletes at the source, on the sqlite store (the test: ./delete-month.ts). */
import { describeDeleteMonth } from './delete-month.js';

describeDeleteMonth('sqlite');
