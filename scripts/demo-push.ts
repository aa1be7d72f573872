/**
 * The push side in the demo: `partner-sync serve` started on a free loopback port over the demo
 * store; a client for a partner that only pushes; a token; a bulk of customers, a deposit whose
 * customer has not arrived (it waits), an invalid request (422, nothing stored), a page of the
 * list; then the server is stopped with SIGTERM (it commits what is in flight and exits 0).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createClient } from '../src/access/api-clients.js';
import { openStore } from '../src/store/store.js';

export async function demoPush(root: string, storeUrl: string): Promise<void> {
  console.log('\nThe push side: partner-sync serve, and a partner that pushes its records (see README, HTTP API).');
  const store = await openStore({ url: storeUrl, cwd: root });
  let client;
  try {
    client = await createClient(store, { partner: 'pushy-casino', variant: 'igaming' });
  } finally {
    await store.close();
  }
  const serve = spawn(process.execPath, [join(root, 'bin', 'partner-sync.js'), '--store', storeUrl, 'serve', '--port', '0'], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LOG_LEVEL: 'warn' } });
  const exited = new Promise<number | null>((resolve) => serve.on('exit', resolve));
  const url = await new Promise<string>((resolve, reject) => {
    let err = '';
    serve.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on (\S+)/.exec(err);
      if (m) resolve(m[1] as string);
    });
    void exited.then((code) => reject(new Error(`serve exited (${code}): ${err}`)));
  });
  try {
    const show = async (what: string, method: string, path: string, body?: unknown, token?: string) => {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': typeof body === 'string' ? 'application/x-www-form-urlencoded' : 'application/json' } : {}) },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await res.text();
      // A bearer token is a credential: not printed.
      const shown = text.replace(/("access_token":")[^"]+/, '$1(not shown)');
      console.log(`\n$ ${what}\n  ${method} ${path} -> ${res.status}\n  ${shown.length > 400 ? shown.slice(0, 400) + '...' : shown}`);
      return JSON.parse(text) as Record<string, unknown>;
    };
    const token = String((await show('get a token (client credentials)', 'POST', '/oauth/token', new URLSearchParams({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret }).toString())).access_token);
    await show('push a bulk of customers', 'POST', '/api/v1/igaming/customers/bulk', [
      { customer_id: 'p-1', signup_date: '2026-11-20T09:30:00Z', affiliate_id: 'aff-001', country_code: 'DE' },
      { customer_id: 'p-2', signup_date: '2026-11-20T10:00:00Z', affiliate_id: 'aff-002' },
    ], token);
    await show('push a deposit whose customer has not arrived: it waits', 'POST', '/api/v1/igaming/transactions', { transaction_id: 'pt-1', customer_id: 'p-3', transaction_type: 'deposit', amount_currency: 50, currency: 'EUR', transaction_date: '2026-11-21T12:00:00Z', status: 'approved' }, token);
    await show('push an invalid bulk: every error listed, nothing stored', 'POST', '/api/v1/igaming/customers/bulk', [{ customer_id: 'p-4', signup_date: 'yesterday', affiliate_id: 'aff-001' }, { customer_id: '', affiliate_id: 'aff-001', colour: 'red' }], token);
    await show('list the partner\'s customers, one per page', 'GET', '/api/v1/igaming/customers?per_page=1', undefined, token);
  } finally {
    serve.kill('SIGTERM');
    await exited;
  }
}
