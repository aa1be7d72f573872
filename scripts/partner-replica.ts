/**
 * Prints the partner-style replica (src/sandbox/partner-replica.ts) as SQL for a client:
 *
 *   node dist/scripts/partner-replica.js mysql [customers] [from] [to] > replica.sql
 *
 * The data is the sandbox's (seed 1) over the days from..to (default: the 30 days before today).
 */
import { createSandboxData } from '../src/sandbox/data.js';
import { partnerReplicaSql, type ReplicaClient } from '../src/sandbox/partner-replica.js';

const [client = 'mysql', customers = '50', from, to] = process.argv.slice(2);
if (!['mysql', 'postgres', 'sqlite'].includes(client)) {
  process.stderr.write('usage: node dist/scripts/partner-replica.js mysql|postgres|sqlite [customers] [from YYYY-MM-DD] [to YYYY-MM-DD]\n');
  process.exit(2);
}
const data = createSandboxData({ customers: Number(customers), ...(from ? { from } : {}), ...(to ? { to } : {}) });
process.stdout.write(partnerReplicaSql(client as ReplicaClient, data).map((s) => `${s};\n`).join('\n'));
