/**
 * Page-number pagination over data that changes during the walk, end to end: a small partner API
 * over real HTTP (page/per_page, the spec's envelope with meta.total, ordered by
 * last_modified_date then customer_id) that inserts or changes records between page requests,
 * synced into every store backend. Records that slide onto a page already read must not be lost,
 * and a window read while the data never holds still must not move the stream's state.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { CursorState } from '../../jobs/cursor-state.js';
import { syncStream, type StreamRunResult } from '../../jobs/sync-stream.js';
import { createRestSource } from '../../connectors/rest/source.js';
import type { PartnerDefinition, RestSource, RestStream } from '../../src/config/definition.js';
import { createLogger, noRedaction } from '../../src/log.js';
import { readState } from '../../src/store/sync-state.js';
import type { SpecRecord } from '../../src/types.js';
import { loaderWith } from '../support/loader.js';
import { customer, gaming } from '../support/records.js';
import { byKey, exampleDefinition, storedByKey } from '../support/sandbox.js';
import { STORES, type TestStore } from '../support/stores.js';

const PATH = '/api/v1/igaming/customers';
const ACTIVITY_PATH = '/api/v1/igaming/activity';
const TOKEN = 'page-shift-test-token';
const HOUR = 3_600_000;

/** A partner's customer list served by page number, changed by `beforePage` before a page is answered. */
interface Partner {
  url: string;
  records: Map<string, SpecRecord>;
  /** Activity rows by day, in the partner's order. */
  activity: Map<string, SpecRecord[]>;
  /** Page requests answered (every walk, the closing empty pages included). */
  requests: number;
  beforePage?: (page: number) => void;
  close(): Promise<void>;
}

const stampOf = (r: SpecRecord): string => r.last_modified_date as string;

async function startPartner(): Promise<Partner> {
  const partner: Partner = { url: '', records: new Map(), activity: new Map(), requests: 0, close: () => Promise.resolve() };
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://partner');
    if (![PATH, ACTIVITY_PATH].includes(url.pathname) || req.headers.authorization !== `Bearer ${TOKEN}`) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      return;
    }
    partner.requests += 1;
    const page = Number(url.searchParams.get('page') ?? '1');
    const perPage = Number(url.searchParams.get('per_page') ?? '50');
    partner.beforePage?.(page);
    const since = url.searchParams.get('modified_since');
    const list = url.pathname === ACTIVITY_PATH
      ? partner.activity.get(url.searchParams.get('date') ?? '') ?? []
      : [...partner.records.values()]
        .filter((r) => since === null || Date.parse(stampOf(r)) >= Date.parse(since))
        .sort((a, b) => Date.parse(stampOf(a)) - Date.parse(stampOf(b)) || String(a.customer_id).localeCompare(String(b.customer_id)));
    const data = list.slice((page - 1) * perPage, page * perPage);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data, meta: { total: list.length, page, per_page: perPage } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  partner.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  partner.close = () => new Promise((resolve) => server.close(() => resolve()));
  return partner;
}

const yesterday = (): string => new Date(Date.now() - 24 * HOUR).toISOString().slice(0, 10);

/** `n` customers `prefix-000`.., stamped one a minute ending `endMs`. */
function add(partner: Partner, prefix: string, n: number, endMs: number): void {
  for (let i = 0; i < n; i++) {
    const id = `${prefix}-${String(i).padStart(3, '0')}`;
    partner.records.set(id, customer(id, { last_modified_date: new Date(endMs - (n - i) * 60_000).toISOString() }));
  }
}

for (const backend of STORES) {
  describe(`page-number pagination over changing partner data on ${backend.name}`, function () {
    this.timeout(60_000);
    let t: TestStore;
    let partner: Partner;
    let def: PartnerDefinition;
    let cleanup: () => void;
    let lines: string[];

    beforeEach(async () => {
      t = await backend.create();
      partner = await startPartner();
      ({ def, cleanup } = await exampleDefinition('igaming', partner.url));
      const source = def.source as RestSource;
      source.auth = { type: 'bearer', token: TOKEN };
      source.retries = { max: 2, min_delay_ms: 5, max_delay_ms: 20, max_retry_after_ms: 1000 };
      const stream = def.streams.customers as RestStream;
      stream.pagination = { type: 'page', per_page: 5, page_param: 'page', per_page_param: 'per_page', first_page: 1 };
      stream.incremental.start = new Date(Date.now() - 48 * HOUR).toISOString();
      const activity = def.streams.activity as RestStream;
      activity.pagination = { ...stream.pagination };
      activity.incremental.start = yesterday();
      lines = [];
    });
    afterEach(async () => {
      await partner.close();
      cleanup();
      await t.drop();
    });

    const sync = async (entity: 'customers' | 'activity' = 'customers'): Promise<StreamRunResult> => {
      const logger = createLogger({ stream: new Writable({ write(chunk: Buffer, _enc, done) { lines.push(chunk.toString()); done(); } }), json: true, level: 'info', redact: noRedaction });
      const source = createRestSource(def.source as RestSource, { clock: t.store.clock, logger, redact: noRedaction });
      return syncStream({ loader: loaderWith(t.store, []), source, logger, redact: noRedaction }, def, entity, { kind: 'run', scheduledFor: new Date() });
    };
    const assertStoreEqualsPartner = async () => {
      const stored = await storedByKey(t.store, def.partner, 'igaming', 'customers');
      const expected = byKey('igaming', 'customers', [...partner.records.values()]);
      assert.equal(stored.size, expected.size, `${stored.size} stored, the partner has ${expected.size}`);
      assert.deepEqual(stored, expected);
    };

    it('nothing shifts: one walk, no request more than the pages and the closing empty page', async () => {
      add(partner, 'c', 12, Date.now() - HOUR);
      const result = await sync();
      assert.equal(result.status, 'succeeded', result.error);
      assert.equal(partner.requests, 4, 'pages 1-3 and the empty page 4');
      assert.equal(result.pageRewalks ?? 0, 0);
      await assertStoreEqualsPartner();
    });

    it('records inserted at the front of the ordering during the walk are read by a re-walk: none lost, the re-walk reported', async () => {
      add(partner, 'c', 20, Date.now() - HOUR);
      // A late batch stamped in the past lands before page 1 while page 3 is asked for: without a
      // re-walk these two are never read, and the stream's start passes their stamps.
      let inserted = false;
      partner.beforePage = (page) => {
        if (page !== 3 || inserted) return;
        inserted = true;
        partner.records.set('late-1', customer('late-1', { last_modified_date: new Date(Date.now() - 30 * HOUR).toISOString() }));
        partner.records.set('late-2', customer('late-2', { last_modified_date: new Date(Date.now() - 29 * HOUR).toISOString() }));
      };
      const result = await sync();
      assert.equal(result.status, 'succeeded', result.error);
      await assertStoreEqualsPartner();
      assert.equal(result.pageRewalks, 1, 'one re-walk');
      // First walk: 5 pages of 20 then 22 records, and the empty page 6; the re-walk: 5 pages and the empty page 6.
      assert.equal(partner.requests, 12);
      assert.equal(result.counts.pulled, 24, 'the first walk\'s 22 (two of them read twice), then only the two it had missed');
      assert.ok(lines.some((l) => /records shifted between pages during the walk \(meta\.total went from 20 to 22 \(page \d\)\)/.test(l)), lines.join(''));
      const state = (await readState(t.store.knex, def.partner, 'customers')) as CursorState;
      assert.ok(state.watermark && state.resume === undefined);
    });

    it('a record changed during the walk moves to the end and one slides onto a page already read: a re-walk reads it', async () => {
      add(partner, 'c', 15, Date.now() - HOUR);
      let changed = false;
      partner.beforePage = (page) => {
        if (page !== 2 || changed) return;
        changed = true;
        // c-000 (read on page 1) changes and moves to the end; c-005 slides onto page 1. meta.total holds still.
        partner.records.set('c-000', { ...partner.records.get('c-000'), kyc_status_id: 'approved', last_modified_date: new Date(Date.now() - 1000).toISOString() } as SpecRecord);
      };
      const result = await sync();
      assert.equal(result.status, 'succeeded', result.error);
      await assertStoreEqualsPartner();
      assert.equal(result.pageRewalks, 1);
      assert.ok(lines.some((l) => l.includes('record \\"c-000\\" came back changed')), lines.join(''));
    });

    it('a partner whose records never hold still: the window ends partial, state as it was, and the next run loads everything', async () => {
      add(partner, 'old', 10, Date.now() - 6 * HOUR);
      const first = await sync();
      assert.equal(first.status, 'succeeded', first.error);
      const before = await readState(t.store.knex, def.partner, 'customers');

      add(partner, 'new', 15, Date.now() - 60_000);
      // Every page after the first: the oldest record of the window changes and moves to the end,
      // so the record after it slides onto a page already read, walk after walk.
      let n = 0;
      partner.beforePage = (page) => {
        if (page < 2) return;
        n += 1;
        const oldest = [...partner.records.values()].filter((r) => String(r.customer_id).startsWith('new')).sort((a, b) => stampOf(a).localeCompare(stampOf(b)))[0] as SpecRecord;
        partner.records.set(oldest.customer_id as string, { ...oldest, kyc_status_id: 'pending', last_modified_date: new Date(Date.now() - 30_000 + n).toISOString() });
      };
      const second = await sync();
      assert.equal(second.status, 'partial', second.error);
      assert.match(second.error ?? '', /records kept shifting between pages over 3 walks/);
      assert.equal(second.pageRewalks, 2);
      assert.deepEqual(await readState(t.store.knex, def.partner, 'customers'), before, 'start, watermark and max_cursor as they were; no position kept');
      assert.ok(lines.some((l) => l.includes('pagination unstable, ending the window')), lines.join(''));

      partner.beforePage = undefined;
      const third = await sync();
      assert.equal(third.status, 'succeeded', third.error);
      await assertStoreEqualsPartner();
      const after = (await readState(t.store.knex, def.partner, 'customers')) as CursorState;
      assert.ok(after.watermark && after.watermark > (before as CursorState).watermark!);
    });

    it('activity days: rows inserted at the front of a day during its walk are read by a re-walk; the day is replaced whole', async () => {
      add(partner, 'c', 12, Date.now() - HOUR);
      assert.equal((await sync()).status, 'succeeded');
      const day = yesterday();
      partner.activity.set(day, [...partner.records.keys()].map((id) => gaming(day, id, { total_bets: 10 })));
      let inserted = false;
      partner.beforePage = (page) => {
        if (page !== 2 || inserted) return;
        inserted = true;
        partner.activity.get(day)?.unshift(gaming(day, 'c-000', { game_type: 'live_casino', total_bets: 7 }));
      };
      const result = await sync('activity');
      assert.equal(result.status, 'succeeded', result.error);
      const stored = await storedByKey(t.store, def.partner, 'igaming', 'activity');
      assert.deepEqual(stored, byKey('igaming', 'activity', partner.activity.get(day) ?? []));
      assert.equal(result.pageRewalks, 1);
    });

    it('activity days: a day whose rows never hold still is not replaced nor recorded as loaded; the run ends partial', async () => {
      add(partner, 'c', 12, Date.now() - HOUR);
      assert.equal((await sync()).status, 'succeeded');
      const day = yesterday();
      partner.activity.set(day, [...partner.records.keys()].map((id) => gaming(day, id, { total_bets: 10 })));
      let n = 0;
      partner.beforePage = (page) => {
        if (page >= 2) partner.activity.get(day)?.unshift(gaming(day, 'c-000', { game_type: `game-${++n}`, total_bets: 1 }));
      };
      const result = await sync('activity');
      assert.equal(result.status, 'partial', result.error);
      assert.match(result.error ?? '', /kept shifting between pages/);
      assert.equal((await storedByKey(t.store, def.partner, 'igaming', 'activity')).size, 0, 'nothing of the day kept');
      assert.equal(((await readState(t.store.knex, def.partner, 'activity')) as { last_day?: string } | undefined)?.last_day, undefined);
    });
  });
}
