import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { main } from '../../src/cli/main.js';
import type { Io } from '../../src/cli/io.js';
import { packageRoot } from '../../src/paths.js';
import { join } from 'node:path';
import { openStore } from '../../src/store/store.js';
import { clientsRevokeCommand } from '../../src/cli/commands/clients.js';
import { requireToken } from '../../src/api/auth.js';
import type { RouteModule } from '../../src/api/types.js';
import { startApi } from '../support/api.js';
import { STORES, type TestStore } from '../support/stores.js';

function captureIo(): Io & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (t) => stdout.push(t), err: (t) => stderr.push(t), stdin: Readable.from([]), isTty: false };
}

const probe: RouteModule = (app) => {
  app.get('/probe', { onRequest: requireToken('read') }, async () => ({ ok: true }));
};

for (const backend of STORES) {
  describe(`partner-sync clients (${backend.name})`, () => {
    let t: TestStore;
    beforeEach(async () => (t = await backend.create()));
    afterEach(async () => t.drop());

    const cli = async (...args: string[]) => {
      const io = captureIo();
      const code = await main(['--store', t.url, '--config', join(packageRoot(), 'config'), ...args], io);
      return { code, out: io.stdout.join('\n'), err: io.stderr.join('\n') };
    };

    it('adds a client with its variant from the definition or --variant, shows the secret once, stores only a salted hash', async () => {
      const added = await cli('clients', 'add', 'sandbox-prop', '--json');
      assert.equal(added.code, 0, added.err);
      const json = JSON.parse(added.out) as Record<string, string>;
      assert.deepEqual(Object.keys(json).sort(), ['client_id', 'client_secret', 'partner', 'scope', 'variant']);
      assert.deepEqual({ partner: json.partner, variant: json.variant, scope: json.scope }, { partner: 'sandbox-prop', variant: 'prop-trading', scope: 'read write' });

      const row = (await t.store.knex('api_clients').where('client_id', json.client_id).first()) as Record<string, string>;
      assert.equal(JSON.stringify(row).includes(json.client_secret!), false, 'the secret itself is not stored');
      assert.deepEqual(JSON.parse(row.secret_kdf!), { alg: 'scrypt', N: 16384, r: 8, p: 1, keylen: 32 });
      assert.equal(Buffer.from(row.secret_salt!, 'base64').length, 16);

      const pushOnly = await cli('clients', 'add', 'pushy', '--variant', 'igaming', '--scope', 'read', '--affiliate', 'aff-7', '--json');
      assert.equal(pushOnly.code, 0, pushOnly.err);
      assert.deepEqual({ ...JSON.parse(pushOnly.out), client_id: undefined, client_secret: undefined }, { client_id: undefined, client_secret: undefined, partner: 'pushy', variant: 'igaming', scope: 'read', affiliate: 'aff-7' });

      const list = await cli('clients', 'list', '--json');
      assert.equal(list.code, 0);
      assert.equal(list.out.includes(json.client_secret!), false);
      const listed = JSON.parse(list.out) as Record<string, unknown>[];
      assert.deepEqual(listed.map((c) => [c.partner, c.variant, c.scope, c.affiliate, c.revoked_at]), [['pushy', 'igaming', 'read', 'aff-7', null], ['sandbox-prop', 'prop-trading', 'read write', null, null]]);
    });

    it('serve refuses to start (exit 2) while a client that hashes personal fields has no hash key in the environment, naming it', async () => {
      const saved = process.env.PARTNER_SYNC_PERSONAL_DATA_KEY;
      try {
        process.env.PARTNER_SYNC_PERSONAL_DATA_KEY = 'k'.repeat(40);
        const added = await cli('clients', 'add', 'pushy', '--variant', 'igaming', '--personal-data', 'email=hash', '--json');
        assert.equal(added.code, 0, added.err);
        const id = (JSON.parse(added.out) as { client_id: string }).client_id;
        delete process.env.PARTNER_SYNC_PERSONAL_DATA_KEY;
        const refused = await cli('serve', '--port', '0');
        assert.equal(refused.code, 2, refused.err);
        assert.match(refused.err, new RegExp(`cannot start the API: API client\\(s\\) ${id} hash personal fields \\(clients add --personal-data\\), and hash needs the key in the environment variable PARTNER_SYNC_PERSONAL_DATA_KEY`));
      } finally {
        if (saved === undefined) delete process.env.PARTNER_SYNC_PERSONAL_DATA_KEY;
        else process.env.PARTNER_SYNC_PERSONAL_DATA_KEY = saved;
      }
    });

    if (backend === STORES[0]) it('refuses a partner with neither definition nor --variant, a contradicting --variant, an unknown scope (exit 2)', async () => {
      const none = await cli('clients', 'add', 'nobody');
      assert.equal(none.code, 2);
      assert.match(none.err, /partner nobody has no connector definition in .*: give --variant igaming\|prop-trading for a partner that only pushes/);
      const contra = await cli('clients', 'add', 'sandbox-casino', '--variant', 'prop-trading');
      assert.equal(contra.code, 2);
      assert.match(contra.err, /partner sandbox-casino is igaming in its connector definition; --variant prop-trading contradicts it/);
      const scope = await cli('clients', 'add', 'sandbox-casino', '--scope', 'admin');
      assert.equal(scope.code, 2);
      assert.match(scope.err, /--scope: unknown scope "admin"; allowed scopes: read, write/);
      const revokeUnknown = await cli('clients', 'revoke', 'ps_nope');
      assert.equal(revokeUnknown.code, 2);
    });

    if (backend.name === 'postgres') {
      it('revoke: the tokens of the client stop working on another process of the same store within its cache time', async () => {
        // Two API instances with their own store connections, as two serve processes.
        const other = await openStore({ url: t.url });
        const a = await startApi(t.store, { routes: [probe], revocationCacheMs: 400 });
        const b = await startApi(other, { routes: [probe], revocationCacheMs: 400 });
        try {
          const client = await a.addClient('acme', 'igaming');
          const token = await a.token(client);
          const get = (api: typeof a) => fetch(`${api.url}/probe`, { headers: { authorization: `Bearer ${token}` } });
          assert.equal((await get(a)).status, 200);
          assert.equal((await get(b)).status, 200, 'the other instance accepts the token (shared signing key) and has cached the client as active');
          const io = captureIo();
          assert.equal(await clientsRevokeCommand({ config: 'config', store: t.url }, { clientId: client.client_id }, io), 0);
          assert.match(io.stdout.join(''), /revoked: its tokens stop working within 5 s on every serve process of this store/);
          await new Promise((r) => setTimeout(r, 450));
          const refused = await get(b);
          assert.equal(refused.status, 401);
          assert.equal(refused.headers.get('www-authenticate'), 'Bearer error="invalid_token"');
          assert.deepEqual(await refused.json(), { error: 'invalid_token', message: 'the access token was revoked' });
        } finally {
          await a.close();
          await b.close();
          await other.close();
        }
      });
    }
  });
}
