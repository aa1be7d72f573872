/**
 * Requests generated and mutated from the served document (fast-check, fixed seed): every
 * operation, with or without a token of either variant, query parameters of the operation and
 * unknown ones with odd values, repeated; bodies from the operation's schema, mutated (extra
 * fields, NULs, duplicated, over the bulk limit) or malformed text; odd content types and
 * Idempotency-Keys. Whatever comes in: no 5xx, every 4xx is JSON, the server keeps answering.
 * SQLite: the same server runs on both stores; the stores' own paths have their own tests.
 *
 * `FUZZ_REQUESTS` and `FUZZ_SEED` change the count (400) and the seed (51). `FUZZ_PRISM=path` (the
 * `prism` binary of @stoplight/prism-cli, not a dependency of the project) sends every request
 * through `prism proxy` started on the served document: each answer Prism logs as outside the
 * document (`Violation: response...`) fails the test too; the request-side violations (those are
 * the fuzzing) and the requests Prism itself refused or fell over on are counted and printed.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fc from 'fast-check';
import { startApi, type StartedApi } from '../support/api.js';
import { freePort } from '../support/ports.js';
import { STORES, type TestStore } from '../support/stores.js';

type Schema = Record<string, unknown>;
interface Operation { path: string; method: string; query: { name: string; schema: Schema }[]; body?: Schema; bodyType?: string }

const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 400);
const SEED = Number(process.env.FUZZ_SEED ?? 51);
const PRISM = process.env.FUZZ_PRISM;

interface Prism { url: string; process: ChildProcess; log: string[] }

/** `prism proxy` of the served document in front of the API; resolves once it answers. */
async function startPrism(bin: string, upstream: string): Promise<Prism> {
  const port = await freePort();
  const child = spawn(bin, ['proxy', `${upstream}/openapi.json`, upstream, '--host', '127.0.0.1', '--port', String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const log: string[] = [];
  let rest = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop() ?? '';
    log.push(...lines);
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 120; i += 1) {
    try {
      await fetch(`${url}/healthz`);
      return { url, process: child, log };
    } catch {
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  child.kill();
  throw new Error(`prism proxy did not answer on ${url}`);
}
const sqlite = STORES.find((b) => b.name === 'sqlite');

(sqlite ? describe : describe.skip)('fuzzed requests from the document (fast-check)', function () {
  this.timeout(PRISM || REQUESTS > 400 ? 1_800_000 : 60_000);
  let t: TestStore;
  let api: StartedApi;
  let doc: Schema;
  let tokens: Record<string, string>;
  let prism: Prism | undefined;
  before(async () => {
    t = await sqlite!.create();
    api = await startApi(t.store);
    tokens = {
      igaming: await api.token(await api.addClient('casino', 'igaming', ['read', 'write'])),
      'prop-trading': await api.token(await api.addClient('firm', 'prop-trading', ['read', 'write'])),
    };
    doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as Schema;
    if (PRISM) prism = await startPrism(PRISM, api.url);
  });
  after(async () => {
    prism?.process.kill();
    await api.close();
    await t.drop();
  });

  const resolve = (s: unknown): Schema => {
    let out = (s ?? {}) as Schema;
    while (typeof out.$ref === 'string') out = (out.$ref as string).split('/').slice(1).reduce<Schema>((a, k) => a[k] as Schema, doc);
    return out;
  };

  /** Values of a schema, near valid: what a client following the document sends. */
  function valueOf(raw: unknown, depth = 0): fc.Arbitrary<unknown> {
    const s = resolve(raw);
    if (s.const !== undefined) return fc.constant(s.const);
    if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
    const choices = (s.oneOf ?? s.anyOf) as unknown[] | undefined;
    if (choices) return fc.oneof(...choices.map((c) => valueOf(c, depth + 1)));
    const type = Array.isArray(s.type) ? (s.type as string[]).find((x) => x !== 'null') : (s.type as string | undefined);
    if (s.format === 'date-time') return fc.date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2027-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString());
    if (s.format === 'date') return fc.date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2027-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
    if (s.format === 'email') return fc.emailAddress();
    if (type === 'string') return fc.string({ minLength: Number(s.minLength ?? 1), maxLength: Math.min(Number(s.maxLength ?? 16), 16) });
    if (type === 'integer') return fc.integer({ min: Number(s.minimum ?? 0), max: Math.min(Number(s.maximum ?? 100_000), 100_000) });
    if (type === 'number') return fc.integer({ min: 0, max: 1_000_000 }).map((n) => n / 100);
    if (type === 'boolean') return fc.boolean();
    if (type === 'array') return depth > 3 ? fc.constant([]) : fc.array(valueOf(s.items, depth + 1), { minLength: Number(s.minItems ?? 0), maxLength: 3 });
    if (type === 'object' || s.properties) {
      if (depth > 3) return fc.constant({});
      const props = Object.fromEntries(Object.entries((s.properties ?? {}) as Record<string, unknown>).map(([k, v]) => [k, valueOf(v, depth + 1)]));
      return fc.record(props, { requiredKeys: ((s.required ?? []) as string[]).filter((k) => k in props) });
    }
    return fc.oneof(fc.string(), fc.integer(), fc.constant(null));
  }

  const ODD = fc.oneof(
    fc.constantFrom('', '0', '-1', '1e309', '99999999999999999999999', 'NaN', 'null', '[]', '2026-02-30', '2026-11-01T24:00:00Z', 'x'.repeat(5000), '%00', '%ff%fe'),
    fc.string({ maxLength: 30 }),
    fc.integer().map(String),
  );
  const MALFORMED = fc.constantFrom('{"a":', '', '['.repeat(200), '{"customer_id":"a","customer_id":"b"}', '{"amount_currency":1.00000000000000001}', '1e999999', 'null');

  function operations(): Operation[] {
    const out: Operation[] = [];
    for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, Schema>>)) {
      for (const [method, op] of Object.entries(methods)) {
        const params = ((op.parameters ?? []) as unknown[]).map(resolve);
        const content = (op.requestBody as Schema | undefined)?.content as Record<string, { schema: unknown }> | undefined;
        const [bodyType, media] = Object.entries(content ?? {})[0] ?? [];
        out.push({
          path, method: method.toUpperCase(),
          query: params.filter((p) => p.in === 'query').map((p) => ({ name: String(p.name), schema: resolve(p.schema) })),
          ...(media ? { body: resolve(media.schema), bodyType } : {}),
        });
      }
    }
    return out;
  }

  it(`${REQUESTS} requests: no 5xx, every 4xx JSON, the server keeps answering`, async () => {
    const ops = operations();
    assert.ok(ops.length >= 20, `operations read from the document: ${ops.length}`);
    const request = fc.constantFrom(...ops).chain((op) => fc.record({
      op: fc.constant(op),
      token: fc.constantFrom('igaming', 'prop-trading', 'igaming', 'prop-trading', 'none', 'forged'),
      query: fc.array(fc.tuple(
        fc.oneof(fc.constantFrom('x', ...op.query.map((q) => q.name)), fc.string({ maxLength: 6 })),
        fc.oneof(ODD, ...op.query.map((q) => valueOf(q.schema).map(String))),
      ), { maxLength: 4 }),
      repeat: fc.boolean(),
      body: op.body
        ? fc.oneof(
          { weight: 3, arbitrary: valueOf(op.body).chain((b) => fc.oneof(
            fc.constant(b),
            fc.jsonValue({ maxDepth: 2 }),
            fc.tuple(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 })).map(([k, v]) => (b !== null && typeof b === 'object' && !Array.isArray(b) ? { ...b, [k]: v } : b)),
            fc.constant(Array.isArray(b) ? Array.from({ length: 1001 }, () => b[0] ?? {}) : [b, b]),
            fc.constant(b !== null && typeof b === 'object' && !Array.isArray(b) ? Object.fromEntries(Object.keys(b).map((k) => [k, '\u0000'])) : b),
          )).map((b) => JSON.stringify(b)) },
          { weight: 1, arbitrary: MALFORMED },
        )
        : fc.constant(undefined),
      contentType: fc.constantFrom(op.bodyType ?? 'application/json', op.bodyType ?? 'application/json', 'text/plain', 'application/json; charset=latin1', undefined),
      idempotencyKey: fc.oneof(fc.constant(undefined), fc.uuid(), fc.constant('k'.repeat(300)), fc.constant('same-key')),
    }));

    const fivexx: string[] = [];
    const notJson: string[] = [];
    const outsideDocument: string[] = [];
    let base = prism?.url ?? api.url;
    const prismFailures: string[] = [];
    let prismRefused = 0;
    const samples = fc.sample(request, { numRuns: REQUESTS, seed: SEED });
    for (const r of samples) {
      const query = r.query.map(([k, v]) => `${encodeURIComponent(k)}=${v.startsWith('%') ? v : encodeURIComponent(v)}`);
      if (r.repeat && query.length > 0) query.push(query[0] as string);
      const url = `${base}${r.op.path}${query.length > 0 ? `?${query.join('&')}` : ''}`;
      const headers: Record<string, string> = {};
      if (r.token === 'forged') headers.authorization = `Bearer ${'x'.repeat(30)}`;
      else if (r.token !== 'none') headers.authorization = `Bearer ${tokens[r.token]}`;
      if (r.contentType) headers['content-type'] = r.contentType;
      if (r.idempotencyKey) headers['idempotency-key'] = r.idempotencyKey;
      const body = r.op.method === 'POST' ? r.body : undefined;
      let res: Response;
      try {
        res = await fetch(url, { method: r.op.method, headers, body });
      } catch (e) {
        if (!prism) throw e;
        // Prism itself fell over (it throws on some malformed form bodies): note it, start it again.
        prismFailures.push(`${r.op.method} ${url.slice(base.length, 160)}: ${(e as Error).message}`);
        prism.process.kill();
        const log = prism.log;
        prism = await startPrism(PRISM!, api.url);
        prism.log.unshift(...log);
        base = prism.url;
        continue;
      }
      const text = await res.text();
      const seen = `${r.op.method} ${url.slice(base.length, 160)} -> ${res.status} ${text.slice(0, 120)}`;
      // Prism's own refusals (a request it cannot forward) are its answers, not the server's.
      if (prism && /prism\/errors/.test(text)) {
        prismRefused += 1;
        continue;
      }
      // /readyz answers 503 by design when the store is not ready; nothing else may.
      if (res.status >= 500 && r.op.path !== '/readyz') fivexx.push(seen);
      if (res.status >= 400 && res.status < 500) {
        let json = /^application\/json/.test(res.headers.get('content-type') ?? '');
        try {
          JSON.parse(text);
        } catch {
          json = false;
        }
        if (!json) notJson.push(seen);
      }
    }
    if (prism) {
      // Prism logs each violation it finds, with its side: `Violation: request...` or `Violation: response...`.
      await new Promise((r) => setTimeout(r, 500));
      const violations = prism.log.filter((l) => /Violation: /.test(l));
      outsideDocument.push(...violations.filter((l) => /Violation: response/.test(l)).map((l) => l.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '').trim()));
      console.log(`      prism proxy: ${samples.length} requests, ${violations.length - outsideDocument.length} request-side violations (the fuzzing), ${outsideDocument.length} answers outside the document, ${prismRefused} refused by Prism itself, ${prismFailures.length} it fell over on`);
      for (const f of prismFailures) console.log(`        prism failed: ${f}`);
    }
    assert.deepEqual(outsideDocument, [], 'every answer is one the document lists');
    assert.deepEqual(fivexx, [], 'no 5xx');
    assert.deepEqual(notJson, [], 'every 4xx is JSON');
    assert.equal((await fetch(`${api.url}/healthz`)).status, 200, 'the server still answers');
  });
});
