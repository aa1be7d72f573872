/**
 * The go-live checklist of a partner (`partner-sync onboard <partner>`): eight items, each verified
 * by running the real thing, never ticked by hand; the results are kept in the store
 * (onboarding_checklist, migration 011) and shown by `status --json`.
 *
 * 1. credentials_received: the definition's secrets resolve and every stream's source answers
 *    (auth accepted, or the database connects).
 * 2. definition_checked: `check` passes for every stream.
 * 3. samples_validated: every stream's first page of recent records validates after mapping, and
 *    the partner has no open rejects in the store.
 * 4. backfill_done: every stream has a successful backfill covering at least N days.
 * 5. reconcile_clean: `reconcile` over the last N closed days finds no difference.
 * 6. schedules_active: every stream's incremental runs are happening (a run started within
 *    10 minutes for customers and transactions, within 25 hours for activity).
 * 7. freshness_24h: for 24 hours, every stream ran with no failed run and is within its
 *    freshness target now.
 * 8. go_live: the seven above pass; its first pass is the partner's go-live time.
 */
import type { Knex } from 'knex';
import { checkPartner } from '../../jobs/check-partner.js';
import { utcDay } from '../../jobs/windows.js';
import { addDays } from '../kernel/dates.js';
import type { SourceDeps } from '../../connectors/index.js';
import type { PartnerDefinition } from '../config/definition.js';
import { freshness, type Freshness } from '../freshness.js';
import { specValidator } from '../spec/validator.js';
import { countOpenRejects } from '../store/rejects.js';
import type { Store } from '../store/store.js';
import { readState } from '../store/sync-state.js';
import { fromStoreTimestamp } from '../store/values.js';
import type { Entity } from '../types.js';
import { reconcile } from './reconcile.js';

export const CHECKLIST_ITEMS = ['credentials_received', 'definition_checked', 'samples_validated', 'backfill_done', 'reconcile_clean', 'schedules_active', 'freshness_24h', 'go_live'] as const;
export type ChecklistItem = (typeof CHECKLIST_ITEMS)[number];

export interface ItemResult {
  item: ChecklistItem;
  ok: boolean;
  detail: string;
  checked_at?: string;
  first_ok_at?: string | null;
}

const DAY_MS = 86_400_000;

interface RunRow {
  stream: string;
  kind: string;
  status: string;
  started_at: unknown;
  window_from: string | null;
  window_to: string | null;
}

export async function verifyChecklist(deps: SourceDeps & { store: Store }, def: PartnerDefinition, backfillDays: number): Promise<ItemResult[]> {
  const { store } = deps;
  const now = deps.clock();
  const streams = Object.keys(def.streams) as Entity[];
  const results: ItemResult[] = [];
  const add = (item: ChecklistItem, ok: boolean, detail: string) => results.push({ item, ok, detail });

  const checks = await checkPartner({ ...deps, validator: specValidator() }, def).catch((error: Error) => [{ partner: def.partner, stream: 'customers' as Entity, ok: false, records: 0, invalid: 0, detail: error.message }]);
  const reached = checks.filter((c) => c.ok || c.invalid > 0 || /columns|record/.test(c.detail));
  add('credentials_received', reached.length === checks.length && checks.length > 0, reached.length === checks.length ? `every stream's source answered (${def.source.type})` : `no answer: ${checks.filter((c) => !reached.includes(c)).map((c) => `${c.stream}: ${c.detail}`).join('; ')}`);
  const failing = checks.filter((c) => !c.ok);
  add('definition_checked', failing.length === 0, failing.length === 0 ? `check passes for ${checks.map((c) => c.stream).join(', ')}` : failing.map((c) => `${c.stream}: ${c.detail}`).join('; '));
  const rejects = [...(await countOpenRejects(store.knex)).entries()].filter(([k]) => k.startsWith(`${def.partner}/`)).reduce((n, [, v]) => n + v, 0);
  const sampled = checks.filter((c) => c.ok && c.records > 0).map((c) => `${c.stream} ${c.records}`);
  const samplesOk = failing.length === 0 && rejects === 0 && sampled.length > 0;
  add('samples_validated', samplesOk, `${sampled.length > 0 ? `records validated: ${sampled.join(', ')}` : 'no recent records to validate'}; open rejects ${rejects}`);

  const runs = (await store.knex('runs').where('partner_id', def.partner).select('stream', 'kind', 'status', 'started_at', 'window_from', 'window_to')) as RunRow[];
  const started = (r: RunRow) => Date.parse(fromStoreTimestamp(r.started_at) ?? '');
  const spanDays = (r: RunRow) => {
    if (r.window_from === null || r.window_to === null) return 0;
    const from = Date.parse(r.window_from.length === 10 ? `${r.window_from}T00:00:00Z` : r.window_from);
    const to = Date.parse(r.window_to.length === 10 ? `${r.window_to}T00:00:00Z` : r.window_to) + (r.window_to.length === 10 ? DAY_MS : 0);
    return Math.round((to - from) / DAY_MS);
  };
  const backfilled = streams.map((s) => Math.max(0, ...runs.filter((r) => r.stream === s && r.kind === 'backfill' && r.status === 'succeeded').map(spanDays)));
  add('backfill_done', backfilled.every((d) => d >= backfillDays), `days backfilled: ${streams.map((s, i) => `${s} ${backfilled[i]}`).join(', ')} (wanted ${backfillDays})`);

  const to = addDays(utcDay(now), -1);
  const from = addDays(to, -(backfillDays - 1));
  try {
    const r = await reconcile(deps, def, from, to);
    const bad = r.days.filter((d) => !d.ok);
    add('reconcile_clean', r.ok, r.ok ? `no difference ${from}..${to}` : `${bad.length} day(s) differ ${from}..${to}: ${bad.slice(0, 3).map((d) => `${d.day} ${d.entity}`).join(', ')}${r.unmappable.length > 0 ? `; ${r.unmappable.length} unmappable` : ''}`);
  } catch (error) {
    add('reconcile_clean', false, `reconcile failed: ${deps.redact((error as Error).message)}`);
  }

  const incremental = runs.filter((r) => r.kind === 'run');
  const active = streams.map((s) => {
    const last = Math.max(-Infinity, ...incremental.filter((r) => r.stream === s).map(started));
    const limit = def.streams[s]?.incremental.mode === 'daily' ? 25 * 3_600_000 : 10 * 60_000;
    return { s, ok: now.getTime() - last <= limit };
  });
  add('schedules_active', active.every((a) => a.ok), active.every((a) => a.ok) ? 'every stream ran on schedule' : `not running on schedule: ${active.filter((a) => !a.ok).map((a) => a.s).join(', ')}`);

  const fresh: string[] = [];
  for (const s of streams) {
    const mine = incremental.filter((r) => r.stream === s);
    const first = Math.min(Infinity, ...mine.map(started));
    const failedRecently = mine.some((r) => r.status !== 'succeeded' && r.status !== 'running' && now.getTime() - started(r) <= DAY_MS);
    const state = await readState(store.knex, def.partner, s);
    const f: Freshness = freshness(s, state as Parameters<typeof freshness>[1], now, def.streams[s]?.incremental.mode);
    if (now.getTime() - first < DAY_MS) fresh.push(`${s}: runs for less than 24 h`);
    else if (failedRecently) fresh.push(`${s}: a run failed in the last 24 h`);
    else if (f.state !== 'ok') fresh.push(`${s}: ${f.detail}`);
  }
  add('freshness_24h', fresh.length === 0, fresh.length === 0 ? 'every stream within its freshness target for 24 h' : fresh.join('; '));
  const open = results.filter((r) => !r.ok).map((r) => r.item);
  add('go_live', open.length === 0, open.length === 0 ? 'every item verified' : `waiting for: ${open.join(', ')}`);
  return results;
}

/** Saves the results; an item's first pass is kept. */
export async function saveChecklist(knex: Knex, partner: string, results: ItemResult[], now: string): Promise<ItemResult[]> {
  const saved: ItemResult[] = [];
  for (const r of results) {
    const before = (await knex('onboarding_checklist').where({ partner_id: partner, item: r.item }).first()) as { first_ok_at: unknown } | undefined;
    const firstOk = before?.first_ok_at ? fromStoreTimestamp(before.first_ok_at) : r.ok ? now : null;
    const row = { partner_id: partner, item: r.item, ok: r.ok, detail: r.detail, checked_at: now, first_ok_at: firstOk };
    if (before) await knex('onboarding_checklist').where({ partner_id: partner, item: r.item }).update(row);
    else await knex('onboarding_checklist').insert(row);
    saved.push({ ...r, checked_at: now, first_ok_at: firstOk });
  }
  return saved;
}

/** The stored checklist per partner (for `status --json`). */
export async function checklistStatus(knex: Knex, partner?: string): Promise<Record<string, ItemResult[]>> {
  const rows = (await knex('onboarding_checklist').modify((q) => (partner ? q.where('partner_id', partner) : q))) as { partner_id: string; item: ChecklistItem; ok: unknown; detail: string; checked_at: unknown; first_ok_at: unknown }[];
  const out: Record<string, ItemResult[]> = {};
  for (const r of rows) {
    (out[r.partner_id] ??= []).push({ item: r.item, ok: Boolean(r.ok), detail: r.detail, checked_at: fromStoreTimestamp(r.checked_at) ?? undefined, first_ok_at: fromStoreTimestamp(r.first_ok_at) });
  }
  for (const items of Object.values(out)) items.sort((a, b) => CHECKLIST_ITEMS.indexOf(a.item) - CHECKLIST_ITEMS.indexOf(b.item));
  return out;
}
