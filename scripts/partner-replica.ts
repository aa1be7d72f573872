/**
 * Prints the partner-style replica (src/sandbox/partner-replica.ts) as SQL for a client:
 *
 *   node dist/scripts/partner-replica.js mysql [customers] [from] [to] [--variant prop-trading] > replica.sql
 *
 * The data is the sandbox's (seed 1) over the days from..to (default: the 30 days before today),
 * iGaming unless --variant prop-trading.
 */
import { createSandboxData } from '../src/sandbox/data.js';
import { partnerReplicaSql, type ReplicaClient } from '../src/sandbox/partner-replica.js';
import { isVariant, type Variant } from '../src/types.js';

const args = process.argv.slice(2);
const flag = args.indexOf('--variant');
const variant = flag >= 0 ? args.splice(flag, 2)[1] : 'igaming';
const [client = 'mysql', customers = '50', from, to] = args;
if (!['mysql', 'postgres', 'sqlite'].includes(client) || variant === undefined || !isVariant(variant)) {
  process.stderr.write('usage: node dist/scripts/partner-replica.js mysql|postgres|sqlite [customers] [from YYYY-MM-DD] [to YYYY-MM-DD] [--variant igaming|prop-trading]\n');
  process.exit(2);
}
const data = createSandboxData({ customers: Number(customers), ...(from ? { from } : {}), ...(to ? { to } : {}) });
process.stdout.write(partnerReplicaSql(client as ReplicaClient, data, variant as Variant).map((s) => `${s};\n`).join('\n'));
