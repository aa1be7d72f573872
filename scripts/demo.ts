/**
 * The main job on the embedded default: a fresh SQLite store; the bundled sample files of both
 * variants (with deliberately bad records) imported through the real CLI, showing what loaded,
 * what was rejected and why, and what waits for its customer; then the sandbox partner API
 * started on 127.0.0.1:4010 and a real incremental sync of the two example partners
 * (config/partners/) into the same store; then `status` and the commissions; last, two sign-ups
 * of one person under two affiliates (samples/fraud/), which fraud detection flags and whose CPA
 * the commission job holds for review.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { openStore } from '../src/store/store.js';
import { listRejects } from '../src/store/rejects.js';
import { waitingSummary } from '../src/store/waiting.js';
import { formatTable } from '../src/cli/table.js';
import { packageRoot } from '../src/paths.js';
import { startSandbox } from '../src/sandbox/server.js';
import { emailKey } from '../src/fraud/identity.js';
import { demoPush } from './demo-push.js';
import { DEMO_STORE_FILE, prepareDemoEnvironment, serveLine } from './demo-env.js';

import { addUser, generatePassword, inviteUser } from '../src/access/console-users.js';

const root = packageRoot();
const storeFile = DEMO_STORE_FILE;
const storeUrl = `sqlite:${storeFile}`;

// What the example definitions read from the environment: the sandbox's demo credential and, where
// no database server runs, SQLite files seeded from samples/ standing in for the prop firm's replica
// and the casino's warehouse (read through the same knex path as MariaDB or PostgreSQL).
const assigned = prepareDemoEnvironment(root, process.env);

function cli(...args: string[]): Promise<number | null> {
  console.log(`\n$ partner-sync ${args.join(' ')}`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, 'bin', 'partner-sync.js'), '--store', storeUrl, ...args], { cwd: root, stdio: 'inherit' });
    child.on('error', reject);
    child.on('close', (code) => (code === 2 || code === null ? reject(new Error(`partner-sync ${args[0]} failed (exit ${code})`)) : resolve(code)));
  });
}

for (const suffix of ['', '-wal', '-shm']) rmSync(join(root, storeFile + suffix), { force: true });
console.log(`partner-sync demo: a fresh embedded store at ${storeFile}`);
await cli('migrate');
// Transactions before customers on purpose: they wait for their customers, then load when those arrive.
const plan: [string, string, string[]][] = [
  ['lucky-casino', 'igaming', ['transactions', 'customers', 'activity']],
  ['apex-funding', 'prop-trading', ['customers', 'transactions', 'activity']],
];
for (const [partner, variant, entities] of plan) {
  for (const entity of entities) {
    await cli('import', partner, '--variant', variant, '--entity', entity, `samples/${variant}/${entity}.ndjson`);
  }
}

const store = await openStore({ url: storeUrl, cwd: root });
try {
  console.log('\nWhat the store holds now:');
  const rows: (string | number)[][] = [];
  for (const table of ['customers', 'transactions', 'gaming_activity', 'trading_activity']) {
    const counts = (await store.knex(table).select('partner_id').count({ n: '*' }).groupBy('partner_id')) as { partner_id: string; n: number }[];
    for (const c of counts) rows.push([c.partner_id, table, Number(c.n)]);
  }
  console.log(formatTable(['PARTNER', 'TABLE', 'ROWS'], rows).replace(/^/gm, '  '));
  const waiting = await waitingSummary(store.knex);
  if (waiting.length > 0) {
    console.log('\nWaiting for their customer to arrive:');
    console.log(formatTable(['PARTNER', 'ENTITY', 'RECORDS'], waiting.map((w) => [w.partner_id, w.entity, w.count])).replace(/^/gm, '  '));
  }
  const rejects = await listRejects(store.knex, { status: 'open' });
  console.log(`\nRejected records kept for review (${rejects.length}):`);
  const why = rejects.flatMap((r) => r.errors.map((e) => [r.partner_id, r.entity, r.position ?? '', e.message]));
  console.log(formatTable(['PARTNER', 'ENTITY', 'LINE', 'WHY'], why).replace(/^/gm, '  '));
} finally {
  await store.close();
}

console.log('\nNow real pulls with the example connector definitions in config/partners/: the sandbox partner');
console.log('API on 127.0.0.1:4010 (OAuth2, paged lists, rate limits), a prop firm\'s database replica and a');
console.log('casino\'s warehouse views (SQLite stand-ins seeded from samples/).');
const sandbox = await startSandbox({ port: 4010 }).catch((error: Error) => {
  throw new Error(`cannot start the sandbox partner on 127.0.0.1:4010 (${error.message}); free the port and run again`);
});
try {
  await cli('check');
  await cli('run', 'sandbox-casino');
  await cli('run', 'sandbox-prop');
  await cli('run', 'replica-prop');
  await cli('run', 'warehouse-casino');
  await cli('status');
  await cli('commissions');
  await cli('commissions', 'recompute');
} finally {
  await sandbox.close();
}

console.log('\nFraud patterns (config/fraud.yaml, docs/fraud.md): one person signs up twice at sandbox-casino,');
console.log('as Mia.Stone+vip@GoogleMail.com under AFF-FD-1 and as miastone@gmail.com under AFF-FD-2, and');
console.log('deposits 60 USD on each account: two CPAs for one player.');
await cli('import', 'sandbox-casino', '--variant', 'igaming', '--entity', 'customers', 'samples/fraud/customers.ndjson');
await cli('import', 'sandbox-casino', '--variant', 'igaming', '--entity', 'transactions', 'samples/fraud/transactions.ndjson');
await cli('fraud', 'list', '--partner', 'sandbox-casino', '--rule', 'duplicate_identity');
const flagStore = await openStore({ url: storeUrl, cwd: root });
let flagId: string | undefined;
try {
  const row = (await flagStore.knex('fraud_flags').where({ partner_id: 'sandbox-casino', rule: 'duplicate_identity', instance_key: JSON.stringify(['email', emailKey('miastone@gmail.com')]) }).first('id')) as { id: number } | undefined;
  flagId = row ? String(row.id) : undefined;
} finally {
  await flagStore.close();
}
if (flagId) {
  await cli('fraud', 'show', flagId);
  await cli('commissions', '--partner', 'sandbox-casino', '--affiliate', 'AFF-FD-1');
  console.log(`\nAn affiliate manager decides: partner-sync fraud confirm ${flagId} --reason "..." voids both CPAs,`);
  console.log(`partner-sync fraud dismiss ${flagId} --reason "..." books them.`);
}

await demoPush(root, storeUrl);
await cli('status', '--partner', 'pushy-casino');

// The web console on the same store: a demo manager (sees money, decides fraud flags) and a demo
// operator (runs, backfills with live progress, replays) with passwords made now.
const consoleStore = await openStore({ url: storeUrl, cwd: root });
try {
  const made = new Map<string, string | undefined>();
  for (const [name, role] of [['demo-manager', 'manager'], ['demo-operator', 'operator']] as const) {
    const exists = Boolean(await consoleStore.knex('console_users').where('name', name).first('name'));
    const password = exists ? undefined : generatePassword();
    if (password !== undefined) await addUser(consoleStore, name, role, password);
    made.set(name, password);
  }
  const shown = (name: string) => made.get(name) ?? 'printed by the first demo run on this store (rm -rf data for a new one)';
  console.log('\nThe web console shows all of this (freshness, runs and backfills, rejects, commissions, reports, the fraud queue):');
  // The definitions' variables the demo set go in front: without them the console would show every demo partner's definition as invalid.
  console.log(`  ${serveLine(storeUrl, assigned)}`);
  console.log('  then open http://127.0.0.1:8080/ and sign in as');
  console.log(`    demo-manager   password ${shown('demo-manager')}   (commissions, reports, fraud decisions)`);
  console.log(`    demo-operator  password ${shown('demo-operator')}   (run now, backfill, replay rejects)`);
  // An affiliate of the sandbox casino, invited: its own figures, players, statements and postbacks.
  let invitation: string | undefined;
  if (!(await consoleStore.knex('console_users').where('name', 'demo-affiliate').first('name'))) {
    invitation = `http://127.0.0.1:8080/console/invite/${(await inviteUser(consoleStore, 'demo-affiliate', 'affiliate', ['aff-101'])).token}`;
  }
  console.log(`  and the affiliate aff-101's own view: open ${invitation ?? 'the invitation printed by the first demo run on this store'} and choose a password`);
  console.log('  (more users: partner-sync users add <name> --role operator|manager, or --role affiliate --affiliate AFF_ID for an invitation)');
} finally {
  await consoleStore.close();
}
