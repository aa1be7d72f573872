/**
 * Detection over a set of customers (what a batch touched, or the history for a rescan): their
 * facts are re-derived, then every unit their old or new facts touch is evaluated (the customers
 * themselves, their identity keys, the affiliate-days and -months of their first deposits,
 * reversals and refunds, the pairs of accounts they trade with), and each unit's flags are made to
 * match its findings: a new instance opens a flag, a changed one updates it, one no longer found
 * is withdrawn when still open, noted unsupported when decided (docs/fraud.md). All in the caller's transaction.
 */
import type { Knex } from 'knex';
import { dialectOf } from '../store/dialect/index.js';
import { addDays, lastDayOf, monthOf } from '../kernel/dates.js';
import type { Store } from '../store/store.js';
import type { Variant } from '../types.js';
import { enabledRules, settingsFor, type FraudConfig, type RuleName } from './config.js';
import { chunked, deriveFacts, loadCustomerData, readFacts, signatureOf, storedCustomers, writeFacts, type CustomerData, type Facts, type Signature } from './facts.js';
import { eachInSlices } from '../yield.js';
import { readAhead } from '../pipeline/read-ahead.js';
import { lockFraud, markUnsupported, upsertFlag, type Finding, type KnownFlag } from './flags.js';
import { cpaFarming, chargebackRate, ftdSpike, monthsOfWindow, refundAfterFee } from './rules/affiliate.js';
import { bonusBustOut, depositCycling, fastFunding } from './rules/customer.js';
import { duplicateIdentity, identityMembers } from './rules/identity.js';
import { tradingPairs } from './rules/trading.js';
import { key, prefetch, type Ctx } from './rules/unit.js';
import { append } from '../kernel/collections.js';

export interface DetectScope {
  partner: string;
  variant: Variant;
  customers: ReadonlySet<string>;
}

export interface Detection {
  partner: string;
  customers: number;
  findings: number;
  opened: number;
  updated: number;
  /** Open flags whose pattern the data no longer shows: deleted, their customers released. */
  withdrawn: number;
  /** Decided flags whose pattern the data no longer shows: kept, noted. */
  unsupported: number;
}

/** Customers whose facts are derived between two turns of the event loop (a few milliseconds of work). */
const CUSTOMERS_A_SLICE = 200;

/**
 * Customers whose rows are read together, the next ones' read sent while these ones' facts are
 * derived. A month's 20,000 customers read at once kept their 93,000 transactions alive through
 * some ten collections of the young generation, each copying them again, and the store idle while
 * the process derived.
 */
const CUSTOMERS_A_READ = 2_000;

/** Rules whose instances belong to customers (the first element of the key, or either of a pair). */
const CUSTOMER_RULES: readonly RuleName[] = ['bonus_bust_out', 'deposit_cycling', 'fast_funding', 'mirrored_pnl', 'copy_trading'];

export interface DetectOptions {
  /** The scope is the partner's whole history: every flag of an enabled rule not found is no longer supported. */
  full?: boolean;
  /** Collects `rule NUL instance key` of every finding (a scan in chunks marks the rest at the end). */
  found?: Set<string>;
  /**
   * Judge every instance the customers take part in, changed or not (a scan: the rules may have
   * changed). Without it, an instance is judged only when a fact that feeds it changed.
   */
  force?: boolean;
}

export async function detect(trx: Knex.Transaction, store: Store, config: FraudConfig, scope: DetectScope, options: DetectOptions = {}): Promise<Detection> {
  const { partner, variant } = scope;
  const result: Detection = { partner, customers: scope.customers.size, findings: 0, opened: 0, updated: 0, withdrawn: 0, unsupported: 0 };
  const settings = settingsFor(config, partner);
  const rules = new Set(enabledRules(settings, variant));
  if (rules.size === 0) return result;
  await lockFraud(store, trx, partner);
  const ctx: Ctx = { db: trx, partner, variant, settings };
  const ids = [...scope.customers].sort();

  const old = await readFacts(trx, partner, ids);
  const facts: Facts[] = [];
  // The per-customer wagering rules first: a window they cannot judge yet (its days' activity not
  // loaded) is noted as pending with the facts, and judged again when those days load.
  const customerFindings: Finding[] = [];
  // The customers' rows, kept once their facts are derived (what the identity rules read); their
  // transactions and wagering are dropped then.
  const data = new Map<string, CustomerData>();
  async function* parts(): AsyncGenerator<Map<string, CustomerData>> {
    for (let i = 0; i < ids.length; i += CUSTOMERS_A_READ) yield await loadCustomerData(trx, partner, variant, ids.slice(i, i + CUSTOMERS_A_READ), settings);
  }
  // The next part is read while this one's facts are derived (one statement at a time on the
  // transaction's connection all the same: the store reads while the process works).
  for await (const read of readAhead(parts())) {
    // In slices: a bulk settle's group is tens of thousands of customers, and the commissions and
    // report facts evaluated beside the rules wait for this process between their statements.
    await eachInSlices(read.values(), CUSTOMERS_A_SLICE, (d) => {
      facts.push(deriveFacts(d, variant, settings));
      if (rules.has('bonus_bust_out')) customerFindings.push(...bonusBustOut(ctx, d));
      if (rules.has('deposit_cycling')) customerFindings.push(...depositCycling(ctx, d));
      data.set(d.row.customer_id, { row: d.row, txs: [], wagering: new Map(), covered: d.covered, ...(d.pending ? { pending: d.pending } : {}) });
    });
  }
  // What changed: only the customers whose facts differ from the stored ones are written, and
  // only the instances those facts feed are judged (set-based over what the batch changed).
  const pendingOf = new Map([...data].map(([id, d]) => [id, d.pending]));
  // Signatures only where there are stored facts to compare with: a customer without any (a
  // first load's every customer) has all its parts written (bench/README.md, the whole pipeline).
  const fresh = new Map(facts.filter((f) => old.signatures.has(f.customer_id)).map((f) => [f.customer_id, signatureOf(f, pendingOf.get(f.customer_id))]));
  const differs = (id: string, part: keyof Signature): boolean => {
    if (options.force === true) return true;
    const stored = old.signatures.get(id);
    return stored === undefined ? data.has(id) : stored[part] !== fresh.get(id)?.[part];
  };
  const rowChanged = new Set(ids.filter((id) => differs(id, 'row')));
  const daysChanged = new Set(ids.filter((id) => differs(id, 'days')));
  const keysChanged = new Set(ids.filter((id) => differs(id, 'identities') || differs(id, 'who')));
  const writeSet = new Set([...rowChanged, ...daysChanged, ...keysChanged]);
  const rowWrite = new Set(ids.filter((id) => rowChanged.has(id) || differs(id, 'who')));
  const daysWrite = new Set(ids.filter((id) => daysChanged.has(id) || differs(id, 'who')));
  await writeFacts(trx, partner, [...writeSet].sort(), facts, pendingOf, { row: rowWrite, days: daysWrite, identities: new Set(ids.filter((id) => differs(id, 'identities'))) }, storedCustomers(old));

  // Units touched by the old or the new facts that changed.
  const identities = new Set([...old.identities.filter((k) => keysChanged.has(k.customer_id)), ...facts.filter((f) => keysChanged.has(f.customer_id)).flatMap((f) => f.identities)].map((k) => key(k.kind, k.value)));
  const farmingMonths = new Set<string>();
  const spikeDays = new Set<string>();
  const chargebackMonths = new Set<string>();
  const refundMonths = new Set<string>();
  const ftds = [...old.customers, ...facts].filter((f) => rowChanged.has(f.customer_id));
  for (const f of ftds) if (f.ftd_date) { farmingMonths.add(key(f.affiliate_id, monthOf(f.ftd_date))); spikeDays.add(key(f.affiliate_id, f.ftd_date)); }
  const days = [...old.days.filter((d) => daysChanged.has(d.customer_id)), ...facts.filter((f) => daysChanged.has(f.customer_id)).flatMap((f) => f.days.map((d) => ({ ...d, affiliate_id: f.affiliate_id })))];
  // Once per affiliate and day: a bulk group's customers share a few thousand of them.
  const windowDays = new Set<string>();
  for (const d of days) {
    const affiliateDay = `${d.affiliate_id}\u0000${d.date}`;
    if (variant === 'igaming' && (d.deposits > 0 || d.reversals > 0) && !windowDays.has(affiliateDay)) {
      windowDays.add(affiliateDay);
      for (const m of monthsOfWindow(d.date, settings.chargeback_rate.window_days)) chargebackMonths.add(key(d.affiliate_id, m));
    }
    // A month's fees are the denominator of its refund rate: a fee day re-judges the month too.
    if (variant === 'prop-trading' && (d.refunds > 0 || d.deposits > 0)) refundMonths.add(key(d.affiliate_id, monthOf(d.date)));
  }

  const findings: Finding[] = [...customerFindings];
  const evaluated = new Map<RuleName, Set<string>>();
  const mark = (rule: RuleName, instance: string) => { const s = evaluated.get(rule) ?? new Set<string>(); s.add(instance); evaluated.set(rule, s); };
  const owners = new Map<RuleName, Set<string>>();
  const own = (rule: RuleName, customers: Iterable<string>) => owners.set(rule, new Set(customers));

  if (rules.has('bonus_bust_out')) own('bonus_bust_out', ids);
  if (rules.has('deposit_cycling')) own('deposit_cycling', ids);
  const needMembers = rules.has('duplicate_identity') || rules.has('fast_funding');
  // fast_funding reads every key's members (a key left with one customer unlinks that customer);
  // duplicate_identity only shared ones.
  const members = needMembers ? await identityMembers(trx, partner, [...identities], data, { shared: !rules.has('fast_funding') }) : new Map();
  if (rules.has('duplicate_identity')) {
    for (const identity of identities) { mark('duplicate_identity', identity); findings.push(...duplicateIdentity(ctx, identity, members.get(identity) ?? [])); }
  }
  if (rules.has('fast_funding')) {
    // The customers and everyone sharing an identity key with them (old or new): their links changed.
    const t = new Set<string>(ids);
    for (const list of members.values()) for (const m of list as { customer_id: string }[]) t.add(m.customer_id);
    const all = [...t].sort();
    const extra = all.filter((c) => !data.has(c));
    const rows = new Map([...data, ...(await loadCustomerData(trx, partner, variant, extra, settings, { rowsOnly: true }))]);
    const funded = new Map((await chunked(trx, all, 300, (c) => trx('fraud_customers').where('partner_id', partner).whereIn('customer_id', c).select('customer_id', 'funded_days') as Promise<{ customer_id: string; funded_days: unknown }[]>))
      .map((r) => [r.customer_id, r.funded_days == null ? null : Number(r.funded_days)]));
    const keysOf = await chunked(trx, all, 300, (c) => trx('fraud_identities').where('partner_id', partner).whereIn('customer_id', c).select('customer_id', 'kind', 'value') as Promise<{ customer_id: string; kind: string; value: string }[]>);
    const linkedMembers = await identityMembers(trx, partner, [...new Set(keysOf.map((k) => key(k.kind, k.value)))], rows);
    own('fast_funding', all);
    for (const c of all) {
      const d = rows.get(c);
      if (!d) continue;
      const linked = new Map<string, string>();
      // Linked by e-mail or click id: first + last name + country alone is too common a coincidence here.
      for (const k of keysOf.filter((x) => x.customer_id === c && x.kind !== 'name').sort((a, b) => (a.kind < b.kind ? -1 : 1))) {
        for (const m of linkedMembers.get(key(k.kind, k.value)) ?? []) if (m.customer_id !== c && !linked.has(m.customer_id)) linked.set(m.customer_id, k.kind);
      }
      const list = [...linked].map(([customer_id, via]) => ({ customer_id, via })).sort((a, b) => (a.customer_id < b.customer_id ? -1 : 1));
      findings.push(...fastFunding(ctx, d, funded.get(c) ?? null, list));
    }
  }
  const unitsOf = (set: Set<string>, span: (a: string, x: string) => [string, string]) => [...set].map((u) => { const [a, x] = JSON.parse(u) as [string, string]; const [from, to] = span(a, x); return { affiliate: a, from, to }; });
  if (rules.has('cpa_farming')) await prefetch(ctx, 'fraud_customers', unitsOf(farmingMonths, (_a, m) => [`${m}-01`, lastDayOf(m)]));
  if (rules.has('chargeback_rate')) await prefetch(ctx, 'fraud_customer_days', unitsOf(chargebackMonths, (_a, m) => [addDays(`${m}-01`, -(settings.chargeback_rate.window_days - 1)), lastDayOf(m)]));
  if (rules.has('refund_after_fee')) await prefetch(ctx, 'fraud_customer_days', unitsOf(refundMonths, (_a, m) => [`${m}-01`, lastDayOf(m)]));
  if (rules.has('cpa_farming')) for (const u of farmingMonths) { mark('cpa_farming', u); const [a, m] = JSON.parse(u) as [string, string]; findings.push(...(await cpaFarming(ctx, a, m))); }
  if (rules.has('ftd_spike')) {
    const byAffiliate = new Map<string, string[]>();
    const spikeRanges: { affiliate: string; from: string; to: string }[] = [];
    for (const u of spikeDays) { const [a, d] = JSON.parse(u) as [string, string]; append(byAffiliate, a, d); }
    for (const [a, list] of byAffiliate) {
      // A day's count is the history of the history_days after it: those are judged again.
      const sorted = list.sort();
      let from = sorted[0]!;
      let to = addDays(from, settings.ftd_spike.history_days);
      const ranges: [string, string][] = [];
      for (const d of sorted.slice(1)) {
        if (d <= addDays(to, 1)) to = addDays(d, settings.ftd_spike.history_days) > to ? addDays(d, settings.ftd_spike.history_days) : to;
        else { ranges.push([from, to]); from = d; to = addDays(d, settings.ftd_spike.history_days); }
      }
      ranges.push([from, to]);
      spikeRanges.push(...ranges.map(([f, t]) => ({ affiliate: a, from: f, to: t })));
    }
    await prefetch(ctx, 'fraud_customers', spikeRanges.map((r) => ({ ...r, from: addDays(r.from, -settings.ftd_spike.history_days) })));
    for (const { affiliate: a, from: f, to: t } of spikeRanges) {
      const r = await ftdSpike(ctx, a, f, t);
      for (const e of r.evaluated) mark('ftd_spike', e);
      findings.push(...r.findings);
    }
  }
  if (rules.has('chargeback_rate')) for (const u of chargebackMonths) { mark('chargeback_rate', u); const [a, m] = JSON.parse(u) as [string, string]; findings.push(...(await chargebackRate(ctx, a, m))); }
  if (rules.has('refund_after_fee')) for (const u of refundMonths) { mark('refund_after_fee', u); const [a, m] = JSON.parse(u) as [string, string]; findings.push(...(await refundAfterFee(ctx, a, m))); }
  if (rules.has('mirrored_pnl') || rules.has('copy_trading')) {
    for (const r of ['mirrored_pnl', 'copy_trading'] as const) if (rules.has(r)) own(r, ids);
    findings.push(...(await tradingPairs(ctx, ids)).filter((f) => rules.has(f.rule as RuleName)));
  }

  // The flags of the evaluated units that this evaluation did not find.
  const found = new Set(findings.map((f) => `${f.rule}\u0000${f.instanceKey}`));
  for (const f of found) options.found?.add(f);
  const candidates: { id: number; rule: string; instance_key: string }[] = [];
  if (options.full) {
    candidates.push(...(await trx('fraud_flags').where('partner_id', partner).whereIn('rule', [...rules]).select('id', 'rule', 'instance_key')));
  } else {
    for (const [rule, instances] of evaluated) {
      candidates.push(...(await chunked(trx, [...instances], { form: 'inList' }, (c) => trx('fraud_flags').where({ partner_id: partner, rule }).modify(dialectOf(trx).inList('instance_key', c)).select('id', 'rule', 'instance_key') as Promise<{ id: number; rule: string; instance_key: string }[]>)));
    }
    // The flags of the customer rules that name these customers: one query for all of them.
    const ruleList = CUSTOMER_RULES.filter((rule) => (owners.get(rule)?.size ?? 0) > 0);
    const everyone = new Set(ruleList.flatMap((rule) => [...owners.get(rule)!]));
    const rows: { id: number; rule: string; instance_key: string }[] = ruleList.length === 0 ? [] : await chunked(trx, [...everyone], { form: 'inList' }, (c) => trx('fraud_flags as f').join('fraud_flag_customers as c', 'c.flag_id', 'f.id')
      .where('f.partner_id', partner).whereIn('f.rule', ruleList).modify(dialectOf(trx).inList('c.customer_id', c)).distinct('f.id', 'f.rule', 'f.instance_key'));
    for (const r of rows) {
      const set = owners.get(r.rule as RuleName)!;
      const parts = JSON.parse(r.instance_key) as string[];
      const pairRule = r.rule === 'mirrored_pnl' || r.rule === 'copy_trading';
      if (pairRule ? parts.some((p) => set.has(p)) : set.has(parts[0]!)) candidates.push(r);
    }
  }
  const seen = new Set<number>();
  for (const c of candidates) {
    if (seen.has(Number(c.id)) || found.has(`${c.rule}\u0000${c.instance_key}`)) continue;
    seen.add(Number(c.id));
    const outcome = await markUnsupported(trx, store, Number(c.id));
    if (outcome === 'withdrawn') result.withdrawn += 1;
    if (outcome === 'noted') result.unsupported += 1;
  }
  findings.sort((a, b) => (a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : a.instanceKey < b.instanceKey ? -1 : a.instanceKey > b.instanceKey ? 1 : 0));
  const known = await knownFlags(trx, partner, findings);
  const done = new Set<string>();
  for (const f of findings) {
    const id = `${f.rule}\u0000${f.instanceKey}`;
    if (done.has(id)) continue;
    done.add(id);
    const r = await upsertFlag(trx, store, f, known.get(id) ?? { row: undefined, customers: [] });
    result.findings += 1;
    if (r.created) result.opened += 1;
    else if (r.changed) result.updated += 1;
  }
  return result;
}

/** The stored flags of these findings with their customers, read in a few queries. */
async function knownFlags(trx: Knex.Transaction, partner: string, findings: readonly Finding[]): Promise<Map<string, KnownFlag>> {
  const out = new Map<string, KnownFlag>();
  const byRule = new Map<string, string[]>();
  for (const f of findings) append(byRule, f.rule, f.instanceKey);
  const rows: Record<string, unknown>[] = [];
  for (const [rule, keys] of byRule) rows.push(...(await chunked(trx, keys, { form: 'inList' }, (c) => trx('fraud_flags').where({ partner_id: partner, rule }).modify(dialectOf(trx).inList('instance_key', c)).select('*') as Promise<Record<string, unknown>[]>)));
  const byId = new Map<number, KnownFlag>();
  for (const r of rows) {
    const k: KnownFlag = { row: r, customers: [] };
    byId.set(Number(r.id), k);
    out.set(`${String(r.rule)}\u0000${String(r.instance_key)}`, k);
  }
  const customers = await chunked(trx, [...byId.keys()], 300, (c) => trx('fraud_flag_customers').whereIn('flag_id', c).select('flag_id', 'customer_id') as Promise<{ flag_id: unknown; customer_id: string }[]>);
  for (const c of customers) byId.get(Number(c.flag_id))?.customers.push(c.customer_id);
  for (const k of byId.values()) k.customers.sort();
  return out;
}

/** After a scan in chunks: every flag of an enabled rule of the partner that no chunk found is no longer supported. */
export async function markNotFound(trx: Knex.Transaction, store: Store, config: FraudConfig, partner: string, variant: Variant, found: ReadonlySet<string>, result: Detection): Promise<void> {
  const rules = enabledRules(settingsFor(config, partner), variant);
  const flags: { id: number; rule: string; instance_key: string }[] = await trx('fraud_flags').where('partner_id', partner).whereIn('rule', rules).select('id', 'rule', 'instance_key');
  for (const f of flags) {
    if (found.has(`${f.rule}\u0000${f.instance_key}`)) continue;
    const outcome = await markUnsupported(trx, store, Number(f.id));
    if (outcome === 'withdrawn') result.withdrawn += 1;
    if (outcome === 'noted') result.unsupported += 1;
  }
}
