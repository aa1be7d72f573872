/**
 * The words `init` reads partner names by: each spec field's usual partner names (playerId,
 * user_id, created...), the abbreviations partners use and what they stand for (aff, btag, sym,
 * ccy...), the codes with an obvious spec value (DEP → deposit, P1 → phase_1), and the names of
 * tables that hold each entity. A name matched here is a guess by name only; the draft says which
 * ones could be wrong with a TODO, and the abbreviations with their meaning.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultSchemaDir } from '../spec/validator.js';
import type { Entity, Variant } from '../types.js';

export const norm = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]/g, '');
/** A normalized name without its unit suffix, both ways (amountInCents → amount; win_minor → win, not w). */
export const stripUnits = (n: string): string[] => [n.replace(/(cents|minor|x100)$/, ''), n.replace(/(incents|inminor)$/, '')];
/** A name that says its values are thousands (accountSizeK, size_k, balance_thousands): the spec's value is 1000 times it. */
export const THOUSANDS_NAME = /(?<=[a-z0-9])(K|_k|_thousands|Thousands|InThousands)$/;
export const stripThousands = (name: string): string => norm(name.replace(THOUSANDS_NAME, ''));
/** A change stamp's name: updated_at, lastModified, upd, MODIFY_TIME. */
export const CHANGE = /(updated|modified|changed|last_?update|modify_?time|mtime|lastmod|^upd(_?(at|ts|time))?$|_upd$)/i;
/** A name that says its values are a customer's (trader, playerNo, LOGIN, contactId). */
export const CUSTOMER_NAME = /(player|customer|cust|user|account|client|member|trader|contact|login)/i;

const CUSTOMER_IDS = ['customerid', 'playerid', 'userid', 'accountid', 'clientid', 'memberid', 'traderid', 'custid', 'playerno', 'customerno', 'login', 'contactid'];
export const CURRENCY_NAMES = ['currency', 'currencycode', 'ccy', 'cur', 'curr', 'currencyiso', 'ccycode'];

/** Partner names for each spec field, normalized (lower case, letters and digits), most likely first. */
export const SYNONYMS: Record<Entity, Record<string, string[]>> = {
  customers: {
    customer_id: [...CUSTOMER_IDS, 'player', 'customer'],
    signup_date: ['signupdate', 'signuptime', 'signupat', 'signedupat', 'registrationdate', 'registeredat', 'registrationtime', 'regdate', 'regtime', 'regts', 'registration', 'registered', 'createdat', 'created', 'createddate', 'createdon', 'joinedat', 'openedat'],
    affiliate_id: ['affiliateid', 'affiliatecode', 'affiliate', 'affid', 'aff', 'affcode', 'btag', 'ibcode', 'ib', 'partnercode', 'agentaccount', 'agent', 'subid', 'referrer'],
    last_modified_date: ['lastmodifieddate', 'lastmodified', 'modifiedat', 'lastupdate', 'lastupdated', 'updatedat', 'modified', 'updated', 'changedat', 'upd', 'updts', 'updat', 'modifytime', 'mtime', 'lastmod'],
    campaign_id: ['campaignid', 'campaign'],
    click_id: ['clickid', 'click'],
    lang_id: ['langid', 'language', 'lang', 'locale', 'languagecode', 'langcode'],
    country_code: ['countrycode', 'country', 'cntry', 'ctry', 'countryiso'],
    kyc_status_id: ['kycstatusid', 'kycstatus', 'kycstate', 'kyc'],
    sales_status_id: ['salesstatusid', 'salesstatus', 'salesstage'],
    first_name: ['firstname', 'givenname'],
    last_name: ['lastname', 'surname', 'familyname'],
    email: ['email', 'emailaddress', 'mail'],
    challenge_type: ['challengetype', 'plan', 'challenge', 'program'],
    phase: ['phase', 'stage'],
    account_size: ['accountsize', 'size', 'balance', 'balanceusd', 'sizek', 'initialbalance', 'startbalance'],
  },
  transactions: {
    transaction_id: ['transactionid', 'txid', 'txnid', 'transid', 'transno', 'txno', 'paymentid', 'paymentno', 'orderid', 'feeid', 'chargeid', 'purchaseid', 'id'],
    customer_id: CUSTOMER_IDS,
    transaction_type: ['transactiontype', 'type', 'typecode', 'txtype', 'transtype', 'trantype', 'kind', 'paymenttype', 'entrytype', 'entrykind', 'action', 'direction'],
    amount_currency: ['amountcurrency', 'amount', 'amt', 'value', 'price', 'fee'],
    currency: CURRENCY_NAMES,
    transaction_date: ['transactiondate', 'createdat', 'paidat', 'purchasedat', 'chargedat', 'occurredat', 'bookedat', 'transdate', 'transts', 'transtime', 'date', 'timestamp', 'ts', 'time', 'created', 'createdon'],
    status: ['status', 'statuscode', 'state', 'paymentstatus', 'result'],
    amount_usd: ['amountusd', 'usdamount', 'amountinusd'],
    transaction_subtype: ['transactionsubtype', 'subtype', 'method', 'paymentmethod'],
    note: ['note', 'comment', 'description', 'memo'],
  },
  activity: {
    date: ['date', 'day', 'statdate', 'activitydate', 'tradedate', 'reportdate', 'businessdate', 'tradingday', 'reportday', 'dt'],
    customer_id: CUSTOMER_IDS,
    game_type: ['gametype', 'gamecategory', 'category', 'game', 'product', 'vertical'],
    instrument: ['instrument', 'symbol', 'sym', 'ticker', 'pair'],
    currency: CURRENCY_NAMES,
    bets_count: ['betscount', 'betcount', 'numbets', 'rounds', 'betsnumber'],
    total_bets: ['totalbets', 'bets', 'betsamount', 'stake', 'stakes', 'turnover', 'handle', 'wagered'],
    wins: ['wins', 'win', 'totalwins', 'winsamount', 'payouts', 'returns', 'winnings'],
    ggr: ['ggr', 'grossgamingrevenue'],
    ngr: ['ngr', 'netgamingrevenue'],
    lots_traded: ['lotstraded', 'lots', 'volume', 'vol'],
    pnl: ['pnl', 'profit', 'profitloss', 'pl', 'realizedpnl', 'closedpnl', 'profitclosed'],
    drawdown: ['drawdown', 'dd'],
    max_drawdown: ['maxdrawdown', 'maxdd'],
  },
};

/**
 * Abbreviations and partner vocabularies worth saying in the draft (normalized name → what it
 * stands for); `doubt` when the name could also mean something else (a TODO stays).
 */
export const ABBREVIATIONS: Record<string, { says: string; doubt?: string }> = {
  aff: { says: 'aff is the usual short form of affiliate' },
  affid: { says: 'affid is the usual short form of affiliate id' },
  affcode: { says: 'affcode is the usual short form of affiliate code' },
  btag: { says: 'btag is the affiliate tracking tag of affiliate platforms' },
  subid: { says: 'sub_id is an affiliate tracking id', doubt: 'it can also be a sub-affiliate or a click id: check it is the affiliate' },
  agent: { says: 'the agent account of MT4/MT5 is the introducing broker (affiliate)', doubt: 'check the agent accounts are the affiliate ids' },
  agentaccount: { says: 'the agent account of MT4/MT5 is the introducing broker (affiliate)', doubt: 'check the agent accounts are the affiliate ids' },
  sym: { says: 'sym is the usual short form of symbol (the instrument)' },
  symbol: { says: 'a trading symbol is the instrument' },
  ticker: { says: 'a ticker is the instrument' },
  ccy: { says: 'ccy is the usual short form of currency' },
  cur: { says: 'cur is the usual short form of currency' },
  curr: { says: 'curr is the usual short form of currency' },
  upd: { says: 'upd is the usual short form of updated' },
  regdate: { says: 'regdate is the registration date' },
};

/** Obvious partner codes of spec values, by the normalized code's start. */
const CODE_WORDS: Record<string, string[]> = {
  deposit: ['d', 'dep', 'deposit'],
  withdrawal: ['w', 'wd', 'wdr', 'withdraw', 'withdrawal', 'cashout'],
  bonus: ['b', 'bon', 'bonus'],
  adjustment: ['adj', 'adjust', 'adjustment'],
  other: ['oth', 'other'],
  challenge_fee: ['fee', 'challenge', 'challengefee'],
  payout: ['pay', 'payout'],
  reset_fee: ['reset', 'resetfee'],
  refund: ['ref', 'refund'],
  pending: ['pend', 'pending', 'new', 'waiting'],
  approved: ['app', 'approved', 'ok', 'success', 'succeeded', 'completed', 'done', 'paid', 'settled', 'captured', 'verified'],
  declined: ['dec', 'declined', 'fail', 'failed', 'rejected', 'cancelled', 'canceled', 'error'],
  reversed: ['rev', 'reversed', 'chargeback', 'refund', 'refunded'],
  rejected: ['rej', 'rejected', 'denied'],
  phase_1: ['p1', 'phase1'],
  phase_2: ['p2', 'phase2'],
  funded: ['f', 'funded', 'live'],
  failed: ['x', 'failed', 'breached', 'lost'],
};

/** The spec's JSON schema of an entity. */
export function specSchema(variant: Variant, entity: Entity): { required: string[]; properties: Record<string, { enum?: unknown[]; pattern?: string }> } {
  return JSON.parse(readFileSync(join(defaultSchemaDir(), variant, `${entity}.schema.json`), 'utf8')) as { required: string[]; properties: Record<string, { enum?: unknown[]; pattern?: string }> };
}

/** Values a spec field takes: its enum, or the examples the spec gives for status fields. */
export function specValues(variant: Variant, entity: Entity, field: string): string[] | undefined {
  const values = specSchema(variant, entity).properties[field]?.enum?.filter((v): v is string => typeof v === 'string');
  if (values !== undefined && values.length > 0) return values;
  if (field === 'status') return ['pending', 'approved', 'declined', 'reversed'];
  if (field === 'kyc_status_id') return ['pending', 'approved', 'rejected'];
  return undefined;
}

/** A map of every distinct code to a spec value, or undefined when one of them is not obvious. */
export function obviousMap(codes: readonly unknown[], values: readonly string[]): Record<string, string> | undefined {
  const map: Record<string, string> = {};
  for (const code of codes) {
    if (typeof code !== 'string') return undefined;
    const n = norm(code);
    if (values.includes(code)) continue;
    const hit = values.find((v) => (CODE_WORDS[v] ?? [norm(v)]).some((w) => n === w || (w.length >= 3 && n.startsWith(w))));
    if (hit === undefined) return undefined;
    map[code] = hit;
  }
  return map;
}

/**
 * The codes that have an obvious spec value and those that have none; undefined when a code is not
 * text. A spec value stands for itself (mapped to itself).
 */
export function partialMap(codes: readonly unknown[], values: readonly string[]): { map: Record<string, string>; unknown: string[] } | undefined {
  const map: Record<string, string> = {};
  const unknown: string[] = [];
  for (const code of codes) {
    if (typeof code !== 'string') return undefined;
    const hit = obviousMap([code], values);
    if (hit === undefined) unknown.push(code);
    else map[code] = hit[code] ?? code;
  }
  return { map, unknown };
}

/** Table and view names that hold each entity; prop-trading transactions are often a fee or purchase table. */
export function tableNamePattern(entity: Entity, variant: Variant): RegExp {
  if (entity === 'customers') return /(player|customer|account|user|client|member|trader|contact)s?$/i;
  if (entity === 'activity') return /(daily|activity|stats?|summary|agg|gaming|pnl|report)/i;
  return variant === 'prop-trading' ? /(payment|transaction|txn|cashier|transfer|ledger|fee|charge|purchase|order)s?$/i : /(payment|transaction|deposit|txn|cashier|transfer|wallet|ledger)s?$/i;
}

/** A table whose rows are all one kind of prop-trading transaction: challenge fees (fees, charges, purchases of challenges). */
export const FEE_TABLE = /(fee|charge|purchase|order)s?$/i;

export const yamlString = (s: string): string => (/^[A-Za-z_][A-Za-z0-9_.\-/]*$/.test(s) && !['true', 'false', 'null', 'yes', 'no', 'on', 'off'].includes(s.toLowerCase()) ? s : JSON.stringify(s));

/**
 * The spec value a partner's code names word for word (`SETTLED` → approved, `D` → deposit,
 * `Approved` → approved), or undefined: a code that only starts like a word, a number, or a word
 * naming two values says nothing on its own. Reconcile reads the source's codes by it, apart from
 * the definition's map.
 */
export function wordValue(code: unknown, values: readonly string[]): string | undefined {
  if (typeof code !== 'string' || code.trim() === '') return undefined;
  const n = norm(code);
  const exact = values.filter((v) => norm(v) === n);
  if (exact.length === 1) return exact[0];
  const hits = values.filter((v) => (CODE_WORDS[v] ?? []).includes(n));
  return hits.length === 1 ? hits[0] : undefined;
}
