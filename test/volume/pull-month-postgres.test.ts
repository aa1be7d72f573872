/** Volume, the pull face, on the postgres store (the test: ./pull-month.ts). */
import { describePullMonth } from './pull-month.js';

describePullMonth('postgres');
