/**
 * The API on a test store, listening on 127.0.0.1 on a free port: `startApi(store)` gives its URL
 * and helpers to create a client and get a token through the real /oauth/token.
 *
 *   const api = await startApi(t.store);
 *   const client = await api.addClient('acme', 'igaming');
 *   const token = await api.token(client);
 *   await fetch(`${api.url}/api/v1/igaming/customers`, { headers: { authorization: `Bearer ${token}` } });
 *   await api.close();
 */
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { createClient, type Scope } from '../../src/access/api-clients.js';
import { buildApi, type ApiOptions } from '../../src/api/server.js';
import type { ApiDeps } from '../../src/api/types.js';
import { silentLogger } from '../../src/log.js';
import { Loader } from '../../src/pipeline/load.js';
import type { Store } from '../../src/store/store.js';
import type { Variant } from '../../src/types.js';
import type { KdfParams } from '../../src/access/secret-hash.js';
import { loaderWithEveryJob } from './loader.js';

const TEST_KDF: KdfParams = { alg: 'scrypt', N: 1024, r: 8, p: 1, keylen: 32 };

export interface TestClient {
  client_id: string;
  client_secret: string;
}

export interface StartedApi {
  url: string;
  app: FastifyInstance;
  deps: ApiDeps;
  close(): Promise<void>;
  addClient(partner: string, variant: Variant, scopes?: readonly Scope[], affiliate?: string): Promise<TestClient>;
  /** An access token of the client, from POST /oauth/token (body credentials). */
  token(client: TestClient): Promise<string>;
}

export interface StartApiOptions extends ApiOptions {
  /** Default: a silent logger. */
  logger?: ApiDeps['logger'];
  /** Default: the spec validator with every after-load job and no commission plans. */
  loader?: Loader;
}

export async function startApi(store: Store, options: StartApiOptions = {}): Promise<StartedApi> {
  const { logger = silentLogger(), loader: given, ...apiOptions } = options;
  const loader = given ?? loaderWithEveryJob(store, { logger });
  const deps: ApiDeps = { store, loader, logger };
  const app = await buildApi(deps, apiOptions);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  const url = `${apiOptions.https ? 'https' : 'http'}://127.0.0.1:${port}`;
  return {
    url,
    app,
    deps,
    close: () => app.close(),
    async addClient(partner, variant, scopes, affiliate) {
      // Cheap hash parameters: tests make many clients; the stored parameters are what verification uses.
      const c = await createClient(store, { partner, variant, scopes, affiliate }, TEST_KDF);
      return { client_id: c.clientId, client_secret: c.clientSecret };
    },
    async token(client) {
      const res = await fetch(`${url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret }),
      });
      const body = (await res.json()) as { access_token?: string };
      if (res.status !== 200 || !body.access_token) throw new Error(`POST /oauth/token answered ${res.status}: ${JSON.stringify(body)}`);
      return body.access_token;
    },
  };
}
