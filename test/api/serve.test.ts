import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type NewClient } from '../../src/access/api-clients.js';
import { packageRoot } from '../../src/paths.js';
import { Readable } from 'node:stream';
import { main } from '../../src/cli/main.js';
import { isLoopback } from '../../src/cli/commands/serve.js';
import { STORES, type TestStore } from '../support/stores.js';

interface Served {
  url: string;
  child: ChildProcess;
  exited: Promise<number | null>;
}

/** `partner-sync serve --port 0 ...` as a subprocess; resolves once it prints the URL it listens on. */
function serve(storeUrl: string, args: string[] = [], env: Record<string, string> = {}): Promise<Served> {
  const child = spawn(process.execPath, [join(packageRoot(), 'bin', 'partner-sync.js'), '--store', storeUrl, '--config', join(packageRoot(), 'config'), 'serve', '--port', '0', ...args], {
    env: { ...process.env, LOG_FORMAT: 'json', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      const m = /partner-sync serve: listening on (https?:\/\/\S+)/.exec(stderr);
      if (m) resolve({ url: m[1]!, child, exited });
    });
    void exited.then((code) => reject(new Error(`serve exited ${code} before listening: ${stderr}`)));
  });
}

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

/** One request over http or https (trusting `ca`); `hold` sends the body in two parts, calling it in between. */
function call(url: string, options: { method?: string; headers?: Record<string, string>; body?: string; ca?: Buffer; agent?: HttpAgent; hold?: () => Promise<void> } = {}): Promise<Answer> {
  const target = new URL(url);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(target, { method: options.method ?? 'GET', headers: options.headers, ca: options.ca, agent: options.agent }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    const body = options.body ?? '';
    if (options.hold) {
      req.write(body.slice(0, 10));
      void options.hold().then(() => req.end(body.slice(10)), reject);
    } else req.end(body);
  });
}

const tokenForm = (client: NewClient) => new URLSearchParams({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret }).toString();
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('partner-sync serve: transport rules', () => {
  it('counts 127.0.0.0/8, ::1 and localhost as loopback, nothing else', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', 'LOCALHOST', '::ffff:127.0.0.1']) assert.equal(isLoopback(h), true, h);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.2', 'example.com', '128.0.0.1', 'localhost.example.com']) assert.equal(isLoopback(h), false, h);
  });

  it('refuses plain HTTP on an address that is not loopback (exit 2, with the reason)', async () => {
    // In process: the refusal comes before the store or the network are touched.
    const err: string[] = [];
    const code = await main(['--store', 'sqlite::memory:', 'serve', '--host', '0.0.0.0', '--port', '0'], { out: () => undefined, err: (t) => err.push(t), stdin: Readable.from([]), isTty: false });
    assert.equal(code, 2);
    assert.match(err.join('\n'), /refusing plain HTTP on 0\.0\.0\.0, which is not a loopback address: give --tls-cert and --tls-key for HTTPS, or --trust-proxy/);
  });
});

for (const backend of STORES.filter((b) => b.name === 'postgres')) {
  describe(`partner-sync serve: two processes on one ${backend.name} store`, function () {
    this.timeout(60_000);
    const LIMIT = 40;
    let t: TestStore;
    let dir: string;
    let ca: Buffer;
    let https: Served; // HTTPS with a self-signed certificate
    let plain: Served; // plain HTTP on loopback
    let client: NewClient;

    before(async () => {
      t = await backend.create();
      dir = mkdtempSync(join(tmpdir(), 'partner-sync-tls-'));
      execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
        '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
      ca = readFileSync(join(dir, 'cert.pem'));
      const env = { PARTNER_SYNC_RATE_LIMIT_PER_MINUTE: String(LIMIT) };
      [https, plain] = await Promise.all([serve(t.url, ['--tls-cert', join(dir, 'cert.pem'), '--tls-key', join(dir, 'key.pem')], env), serve(t.url, [], env)]);
      client = await createClient(t.store, { partner: 'acme', variant: 'igaming' });
    });
    after(async () => {
      for (const s of [https, plain]) if (s && s.child.exitCode === null) s.child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      await t.drop();
    });

    it('serves HTTPS with the certificate given; a token of one process works on the other', async () => {
      assert.match(https.url, /^https:\/\/127\.0\.0\.1:\d+$/);
      const health = await call(`${https.url}/healthz`, { ca });
      assert.deepEqual([health.status, JSON.parse(health.body)], [200, { status: 'ok' }]);
      const issued = await call(`${https.url}/oauth/token`, { method: 'POST', headers: FORM, body: tokenForm(client), ca });
      assert.equal(issued.status, 200);
      const { access_token: token } = JSON.parse(issued.body) as { access_token: string };
      const elsewhere = await call(`${plain.url}/api/v1/igaming/nothing`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(elsewhere.status, 404, 'authenticated by the other process (then no such route)');
      await assert.rejects(call(`${https.url}/healthz`), 'the certificate is not trusted without its CA');
    });

    it('shares the per-token limit between the processes: 429 with Retry-After past it, never more admitted', async () => {
      const issued = await call(`${plain.url}/oauth/token`, { method: 'POST', headers: FORM, body: tokenForm(client) });
      const { access_token: token } = JSON.parse(issued.body) as { access_token: string };
      const headers = { authorization: `Bearer ${token}` };
      const agents = [new HttpsAgent({ keepAlive: true, ca }), new HttpAgent({ keepAlive: true })];
      const answers = await Promise.all(Array.from({ length: LIMIT + 10 }, (_, i) =>
        // A path under /api/ that is no route: authenticated and counted (then 404), like every API route.
        call(`${i % 2 === 0 ? https.url : plain.url}/api/v1/igaming/ratecheck`, { headers, ca, agent: agents[i % 2] })));
      for (const a of agents) a.destroy();
      const statuses = answers.map((a) => a.status);
      assert.equal(statuses.filter((s) => s === 404).length, LIMIT);
      const limited = answers.filter((a) => a.status === 429);
      assert.equal(limited.length, 10);
      for (const a of limited) {
        assert.ok(Number(a.headers['retry-after']) >= 1 && Number(a.headers['retry-after']) <= 60, `Retry-After ${String(a.headers['retry-after'])}`);
        assert.equal((JSON.parse(a.body) as { error: string }).error, 'rate_limited');
      }
    });

    it('SIGTERM: stops accepting, finishes the request in flight, exits 0', async () => {
      const inFlight = call(`${plain.url}/oauth/token`, {
        method: 'POST',
        headers: { ...FORM, 'content-length': String(tokenForm(client).length) },
        body: tokenForm(client),
        hold: async () => {
          await sleep(200); // the request has arrived and its body is being read
          plain.child.kill('SIGTERM');
          await sleep(300);
          assert.equal(plain.child.exitCode, null, 'still running while a request is in flight');
          await assert.rejects(call(`${plain.url}/healthz`), 'no new connections once stopping');
        },
      });
      const answer = await inFlight;
      assert.equal(answer.status, 200);
      assert.equal((JSON.parse(answer.body) as { token_type: string }).token_type, 'Bearer');
      assert.equal(await plain.exited, 0);
    });
  });
}
