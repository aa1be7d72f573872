/**
 * `partner-sync postbacks` as users run it (a subprocess), on both stores: add checks the URL and
 * shows the secret once, list never shows it, test sends a signed event, log shows delivery
 * state, replay and remove; errors name the field and exit 2.
 */
import assert from 'node:assert/strict';
import { runCli } from '../support/cli.js';
import { startReceiver, verifies, type Receiver } from '../support/receiver.js';
import { STORES, type TestStore } from '../support/stores.js';
import { SECRET_KEY } from './harness.js';

const KEY = { POSTBACK_SECRET_KEY: SECRET_KEY };

for (const backend of STORES) {
  describe(`postbacks command on ${backend.name}`, function () {
    this.timeout(60_000);
    let t: TestStore;
    let rx: Receiver;
    beforeEach(async () => {
      t = await backend.create();
      rx = await startReceiver();
    });
    afterEach(async () => {
      await rx.close();
      await t.drop();
    });
    const cli = (args: string[], env: Record<string, string> = KEY) => runCli(['--store', t.url, 'postbacks', ...args], { env: { POSTBACK_SECRET_KEY: '', ...env } });

    it('adds a postback showing its secret once, lists it without it, sends a signed test, and removes it', async () => {
      const noKey = await cli(['add', '--affiliate', 'aff-1', '--events', 'ftd', '--url', `${rx.url}/pb`, '--allow-private'], {});
      assert.equal(noKey.code, 2);
      assert.match(noKey.stderr, /POSTBACK_SECRET_KEY is not set/);
      const added = await cli(['add', '--affiliate', 'aff-1', '--events', 'ftd,deposit', '--url', `${rx.url}/pb?c={click_id}&e={event}`, '--allow-private', '--json']);
      assert.equal(added.code, 0, added.stderr);
      const body = JSON.parse(added.stdout) as { id: string; secret: string; events: string[] };
      assert.deepEqual(body.events, ['ftd', 'deposit']);
      assert.match(body.secret, /^pbs_[A-Za-z0-9_-]{43}$/);
      const list = await cli(['list', '--json']);
      assert.deepEqual((JSON.parse(list.stdout) as { id: string }[]).map((p) => p.id), [body.id]);
      assert.ok(!list.stdout.includes(body.secret), 'list never shows the secret');
      // The store file holds no secret either.
      const row = await t.store.knex('postbacks').first('*');
      assert.ok(!JSON.stringify(row).includes(body.secret.slice(4)));

      const test = await cli(['test', body.id, '--json']);
      assert.equal(test.code, 0, test.stderr);
      assert.equal(rx.requests.length, 1);
      assert.ok(verifies(body.secret, rx.requests[0]!));
      assert.equal(new URL(rx.requests[0]!.url, rx.url).searchParams.get('e'), 'test');
      rx.answer = () => ({ status: 500 });
      const failed = await cli(['test', body.id]);
      assert.equal(failed.code, 1);
      assert.match(failed.stdout, /NOT delivered: HTTP 500: tracker says no/);

      const removed = await cli(['remove', body.id]);
      assert.equal(removed.code, 0);
      assert.equal(JSON.parse((await cli(['list', '--json'])).stdout).length, 0);
      const again = await cli(['remove', body.id]);
      assert.equal(again.code, 2);
      assert.match(again.stderr, new RegExp(`no postback ${body.id}`));
    });

    it('refuses a bad definition with the field and the reason (exit 2)', async () => {
      const cases: [string[], RegExp][] = [
        [['--events', 'ftd', '--url', 'http://127.0.0.1:9/x'], /cannot add the postback: url: 127\.0\.0\.1: 127\.0\.0\.1 is a private, loopback, link-local or reserved address; give --allow-private/],
        [['--events', 'bogus', '--url', 'https://tracker.example/x'], /cannot add the postback: events: unknown event "bogus"; known events: registration, ftd/],
        [['--events', 'ftd', '--url', 'https://tracker.example/x?m={email}'], /cannot add the postback: url: macro \{email\} is personal data/],
      ];
      for (const [args, message] of cases) {
        const r = await cli(['add', '--affiliate', 'aff-1', ...args]);
        assert.equal(r.code, 2, r.stderr);
        assert.match(r.stderr, message);
      }
      assert.equal((await t.store.knex('postbacks').count({ n: '*' }) as { n: number }[])[0]!.n, 0, 'nothing was added');
    });

    it('log shows delivery state; replay of an unknown event is an error', async () => {
      const log = await cli(['log', '--json']);
      assert.deepEqual(JSON.parse(log.stdout), []);
      const r = await cli(['replay', 'no-such-event']);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /no postback event no-such-event/);
      const bare = await cli(['replay']);
      assert.equal(bare.code, 2);
      assert.match(bare.stderr, /name event ids, or give --dead/);
    });
  });
}
