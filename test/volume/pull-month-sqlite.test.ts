/** Volume, the pull face, on the sqlite store (the test: ./pull-month.ts). */
import { describePullMonth } from './pull-month.js';

describePullMonth('sqlite');
