/**
 * Every answer is one the served document lists for its operation (what Prism's proxy checks):
 * a query parameter given twice is refused on every route, the service routes and the token
 * endpoint included, with a status each operation documents and a JSON body naming the parameter.
 */
import assert from 'node:assert/strict';
import { startApi, type StartedApi } from '../support/api.js';
import { STORES } from '../support/stores.js';

interface Operation { responses: Record<string, unknown> }
type Document = { paths: Record<string, Record<string, Operation>> };

for (const backend of STORES) {
  describe(`answers the document lists, on ${backend.name}`, () => {
    let t: Awaited<ReturnType<typeof backend.create>>;
    let api: StartedApi;
    let tokens: Record<string, string>;
    before(async () => {
      t = await backend.create();
      api = await startApi(t.store);
      tokens = {
        igaming: await api.token(await api.addClient('casino', 'igaming', ['read', 'write', 'erase'])),
        'prop-trading': await api.token(await api.addClient('firm', 'prop-trading', ['read', 'write', 'erase'])),
      };
    });
    after(async () => {
      await api.close();
      await t.drop();
    });

    it('a repeated parameter on every operation: a documented status, JSON naming it', async () => {
      const doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as Document;
      const checked: string[] = [];
      for (const [path, operations] of Object.entries(doc.paths)) {
        for (const [method, operation] of Object.entries(operations)) {
          const variant = path.includes('/igaming/') ? 'igaming' : 'prop-trading';
          const res = await fetch(`${api.url}${path}?x=1&x=2`, {
            method: method.toUpperCase(),
            headers: { authorization: `Bearer ${tokens[variant]}`, ...(method === 'post' ? { 'content-type': path === '/oauth/token' ? 'application/x-www-form-urlencoded' : 'application/json', 'idempotency-key': 'k-1' } : {}) },
            ...(method === 'post' ? { body: path === '/oauth/token' ? 'grant_type=client_credentials' : '{}' } : {}),
          });
          const text = await res.text();
          assert.ok(Object.keys(operation.responses).includes(String(res.status)), `${method} ${path}?x=1&x=2 answered ${res.status}, the document lists ${Object.keys(operation.responses).join(', ')}`);
          assert.equal(res.status, 400, `${method} ${path}`);
          assert.match(res.headers.get('content-type') ?? '', /^application\/json/, `${method} ${path}`);
          const body = JSON.parse(text) as { message?: string; error_description?: string };
          assert.equal(body.message ?? body.error_description, 'the query parameter x is given more than once; give it once', `${method} ${path}`);
          checked.push(`${method} ${path}`);
        }
      }
      assert.ok(checked.includes('get /healthz') && checked.includes('get /docs') && checked.includes('post /oauth/token'), checked.join(', '));
    });

    it('a parameter the service routes do not take, given once, is ignored', async () => {
      for (const path of ['/healthz', '/readyz', '/metrics', '/openapi.json', '/docs']) {
        const res = await fetch(`${api.url}${path}?x=1`);
        assert.equal(res.status, 200, path);
      }
    });
  });
}
