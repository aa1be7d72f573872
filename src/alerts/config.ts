/**
 * config/alerts.yaml (docs/worker.md, Alerts): the channels alerts go to, the rules that route
 * each kind of condition (for which partners) to channels, the thresholds that make a condition,
 * and how often an ongoing one is repeated. A channel's address (a webhook URL with its token, an
 * SMTP URL with its password) is named by an environment variable, never written in the file,
 * and is redacted from every log line. Without the file, `ALERT_WEBHOOK_URL` alone sends every
 * kind to one generic webhook, as before the rules existed.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { isLoopbackHost } from '../config/secure-url.js';

export const ALERT_KINDS = [
  'run_failed',
  'run_held',
  'postbacks_dead',
  'unevaluated',
  'freshness_breach',
  'reconcile_difference',
  'fx_rate_missing',
  'fx_feed_failed',
  'store_outage',
  'deletes_held',
] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

export type Channel =
  | { name: string; type: 'webhook' | 'slack'; url: string }
  | { name: string; type: 'email'; smtpUrl: string; from: string; to: readonly string[] };

export interface AlertRule {
  kinds: ReadonlySet<AlertKind>;
  /** None: every partner. */
  partners?: ReadonlySet<string>;
  channels: readonly string[];
}

export interface Thresholds {
  /** run_failed: this many finished runs of a stream in a row failed. */
  runFailures: number;
  /** unevaluated: the oldest record loaded but not evaluated is older than this. */
  unevaluatedMs: number;
  /** fx_rate_missing: a day's rate is missing once this UTC time of the next day has passed (HH:MM). */
  fxRateBy: string;
}

export interface AlertConfig {
  channels: ReadonlyMap<string, Channel>;
  rules: readonly AlertRule[];
  thresholds: Thresholds;
  /** An ongoing condition is sent again this often (0: never). */
  repeatMs: number;
  /** A condition that starts again within this long of its last start is not sent again (flapping). */
  flapMs: number;
  /** The console's address, for the link in every message. */
  consoleUrl?: string;
}

export const DEFAULT_THRESHOLDS: Thresholds = { runFailures: 3, unevaluatedMs: 30 * 60_000, fxRateBy: '18:00' };
const DEFAULTS = { repeatMinutes: 240, flapMinutes: 15 };
const CHANNEL_KEYS: Record<Channel['type'], readonly string[]> = { webhook: ['type', 'url_env'], slack: ['type', 'url_env'], email: ['type', 'smtp_url_env', 'from', 'to'] };
const TOP_KEYS = ['channels', 'rules', 'thresholds', 'repeat_minutes', 'flap_minutes', 'console_url'];
const EMAIL = /^[^\s@<>]+@[^\s@<>]+$/;

/** Why a webhook URL cannot be used, or undefined: https, or plain http to this machine only. */
export function webhookUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a URL';
  }
  if (parsed.protocol === 'https:' || (parsed.protocol === 'http:' && isLoopbackHost(parsed.hostname))) return undefined;
  return 'must be https:// (plain http only to this machine)';
}

function smtpUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a URL';
  }
  if (parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:') return 'must be smtp://host:port (STARTTLS required except to this machine) or smtps://host:465';
  return undefined;
}

/** ALERT_WEBHOOK_URL (or the file ALERT_WEBHOOK_URL_FILE names), or undefined; throws naming the variable when unusable. */
export function webhookUrlFromEnv(env: NodeJS.ProcessEnv): string | undefined {
  let url = env.ALERT_WEBHOOK_URL?.trim();
  if (!url && env.ALERT_WEBHOOK_URL_FILE) {
    try {
      url = readFileSync(env.ALERT_WEBHOOK_URL_FILE, 'utf8').trim();
    } catch (error) {
      throw new Error(`ALERT_WEBHOOK_URL_FILE: cannot read ${env.ALERT_WEBHOOK_URL_FILE}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { cause: error });
    }
  }
  if (!url) return undefined;
  const problem = webhookUrlProblem(url);
  if (problem) throw new Error(`ALERT_WEBHOOK_URL ${problem}`);
  return url;
}

/** The secrets of a config (channel addresses), for the log redactor. */
export function alertSecrets(config: AlertConfig | undefined): string[] {
  if (!config) return [];
  return [...config.channels.values()].flatMap((c) => {
    const url = c.type === 'email' ? c.smtpUrl : c.url;
    const parsed = URL.canParse(url) ? new URL(url) : undefined;
    return [url, ...(parsed?.password ? [decodeURIComponent(parsed.password)] : []), ...(parsed && parsed.pathname.length > 8 ? [parsed.pathname] : [])];
  });
}

/** Reads an environment variable, or its `_FILE` twin (a mounted secret). */
function fromEnv(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name]?.trim();
  if (value) return value;
  const file = env[`${name}_FILE`];
  if (!file) return undefined;
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

export function parseAlertConfig(data: unknown, file: string, env: NodeJS.ProcessEnv): { config?: AlertConfig; errors: string[] } {
  const errors: string[] = [];
  const at = (path: string, reason: string) => errors.push(`${file}: ${path}: ${reason}`);
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return { errors: [`${file}: expected keys channels and rules`] };
  const d = data as Record<string, unknown>;
  for (const key of Object.keys(d)) if (!TOP_KEYS.includes(key)) at(key, `unknown key; allowed: ${TOP_KEYS.join(', ')}`);

  const channels = new Map<string, Channel>();
  const rawChannels = d.channels;
  if (typeof rawChannels !== 'object' || rawChannels === null || Array.isArray(rawChannels) || Object.keys(rawChannels).length === 0) at('channels', 'a map of channel names to {type: webhook|slack|email, ...}');
  else {
    for (const [name, raw] of Object.entries(rawChannels as Record<string, unknown>)) {
      const path = `channels.${name}`;
      if (typeof raw !== 'object' || raw === null) {
        at(path, 'expected {type, ...}');
        continue;
      }
      const c = raw as Record<string, unknown>;
      const type = c.type;
      if (type !== 'webhook' && type !== 'slack' && type !== 'email') {
        at(`${path}.type`, `webhook (generic JSON), slack (a Slack-compatible incoming webhook) or email (SMTP), got ${JSON.stringify(type)}`);
        continue;
      }
      for (const key of Object.keys(c)) if (!CHANNEL_KEYS[type].includes(key)) at(`${path}.${key}`, `unknown key; allowed for ${type}: ${CHANNEL_KEYS[type].join(', ')}`);
      const envKey = type === 'email' ? 'smtp_url_env' : 'url_env';
      const variable = c[envKey];
      if (typeof variable !== 'string' || !/^[A-Z_][A-Z0-9_]*$/.test(variable)) {
        at(`${path}.${envKey}`, `the name of the environment variable holding the ${type === 'email' ? 'SMTP URL' : 'URL'} (it carries a secret: never in this file), got ${JSON.stringify(variable)}`);
        continue;
      }
      const value = fromEnv(env, variable);
      if (value === undefined) {
        at(`${path}.${envKey}`, `${variable} is not set (nor a readable file named by ${variable}_FILE)`);
        continue;
      }
      const problem = type === 'email' ? smtpUrlProblem(value) : webhookUrlProblem(value);
      if (problem) {
        at(`${path}.${envKey}`, `${variable} ${problem}`);
        continue;
      }
      if (type === 'email') {
        const to = typeof c.to === 'string' ? [c.to] : c.to;
        if (typeof c.from !== 'string' || !EMAIL.test(c.from)) at(`${path}.from`, `the sender's address, got ${JSON.stringify(c.from)}`);
        else if (!Array.isArray(to) || to.length === 0 || !to.every((x) => typeof x === 'string' && EMAIL.test(x))) at(`${path}.to`, `one address or a list of them, got ${JSON.stringify(c.to)}`);
        else channels.set(name, { name, type, smtpUrl: value, from: c.from, to: to as string[] });
      } else channels.set(name, { name, type, url: value });
    }
  }

  const rules: AlertRule[] = [];
  if (!Array.isArray(d.rules) || d.rules.length === 0) at('rules', 'a list of {when, channels[, partners]}');
  else {
    d.rules.forEach((raw: unknown, i) => {
      const path = `rules[${i}]`;
      if (typeof raw !== 'object' || raw === null) return at(path, 'expected {when, channels[, partners]}');
      const r = raw as Record<string, unknown>;
      for (const key of Object.keys(r)) if (!['when', 'partners', 'channels'].includes(key)) at(`${path}.${key}`, 'unknown key; allowed: when, partners, channels');
      const when = r.when === 'all' ? [...ALERT_KINDS] : typeof r.when === 'string' ? [r.when] : r.when;
      if (!Array.isArray(when) || when.length === 0) return at(`${path}.when`, `all, one kind or a list of: ${ALERT_KINDS.join(', ')}`);
      const bad = when.filter((k) => !(ALERT_KINDS as readonly unknown[]).includes(k));
      if (bad.length > 0) return at(`${path}.when`, `unknown kind ${bad.map((k) => JSON.stringify(k)).join(', ')}; kinds: ${ALERT_KINDS.join(', ')}`);
      const to = typeof r.channels === 'string' ? [r.channels] : r.channels;
      if (!Array.isArray(to) || to.length === 0) return at(`${path}.channels`, 'one channel name or a list of them');
      const unknown = to.filter((n) => typeof n !== 'string' || !(rawChannels as Record<string, unknown> | undefined)?.[n]);
      if (unknown.length > 0) return at(`${path}.channels`, `no channel named ${unknown.map((n) => JSON.stringify(n)).join(', ')} under channels`);
      const partners = r.partners === undefined ? undefined : typeof r.partners === 'string' ? [r.partners] : r.partners;
      if (partners !== undefined && (!Array.isArray(partners) || !partners.every((p) => typeof p === 'string'))) return at(`${path}.partners`, 'one partner id or a list of them (none: every partner)');
      rules.push({ kinds: new Set(when as AlertKind[]), channels: to as string[], ...(partners ? { partners: new Set(partners as string[]) } : {}) });
    });
  }

  const thresholds = { ...DEFAULT_THRESHOLDS };
  if (d.thresholds !== undefined) {
    const t = d.thresholds as Record<string, unknown>;
    if (typeof t !== 'object' || t === null) at('thresholds', 'expected {run_failures, unevaluated_minutes, fx_rate_by}');
    else {
      for (const key of Object.keys(t)) if (!['run_failures', 'unevaluated_minutes', 'fx_rate_by'].includes(key)) at(`thresholds.${key}`, 'unknown key; allowed: run_failures, unevaluated_minutes, fx_rate_by');
      if (t.run_failures !== undefined) {
        if (!Number.isInteger(t.run_failures) || (t.run_failures as number) < 1 || (t.run_failures as number) > 100) at('thresholds.run_failures', `a whole number 1..100, got ${JSON.stringify(t.run_failures)}`);
        else thresholds.runFailures = t.run_failures as number;
      }
      if (t.unevaluated_minutes !== undefined) {
        if (typeof t.unevaluated_minutes !== 'number' || t.unevaluated_minutes <= 0) at('thresholds.unevaluated_minutes', `minutes above 0, got ${JSON.stringify(t.unevaluated_minutes)}`);
        else thresholds.unevaluatedMs = t.unevaluated_minutes * 60_000;
      }
      if (t.fx_rate_by !== undefined) {
        if (typeof t.fx_rate_by !== 'string' || !/^([01]\d|2[0-3]):[0-5]\d$/.test(t.fx_rate_by)) at('thresholds.fx_rate_by', `a UTC time HH:MM, got ${JSON.stringify(t.fx_rate_by)}`);
        else thresholds.fxRateBy = t.fx_rate_by;
      }
    }
  }
  const minutes = (key: 'repeat_minutes' | 'flap_minutes', fallback: number): number => {
    const v = d[key];
    if (v === undefined) return fallback;
    if (typeof v !== 'number' || v < 0) {
      at(key, `minutes, 0 or more, got ${JSON.stringify(v)}`);
      return fallback;
    }
    return v;
  };
  const repeatMs = minutes('repeat_minutes', DEFAULTS.repeatMinutes) * 60_000;
  const flapMs = minutes('flap_minutes', DEFAULTS.flapMinutes) * 60_000;
  let consoleUrl: string | undefined;
  if (d.console_url !== undefined) {
    if (typeof d.console_url !== 'string' || !/^https?:\/\/[^\s?#]+$/.test(d.console_url)) at('console_url', `the console's address, http(s)://host[:port] (no query), got ${JSON.stringify(d.console_url)}`);
    else consoleUrl = d.console_url.replace(/\/+$/, '');
  }
  if (errors.length > 0) return { errors };
  return { config: { channels, rules, thresholds, repeatMs, flapMs, ...(consoleUrl ? { consoleUrl } : {}) }, errors };
}

/**
 * config/alerts.yaml; without it, ALERT_WEBHOOK_URL (or the file ALERT_WEBHOOK_URL_FILE names)
 * as one generic webhook for every kind; neither: undefined (no alerts, events in the log only).
 * `PARTNER_SYNC_CONSOLE_URL` gives the console link when the file does not.
 */
export async function loadAlertConfig(file: string, env: NodeJS.ProcessEnv): Promise<{ config?: AlertConfig; errors: string[] }> {
  let text: string | undefined;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return { errors: [`${file}: ${(error as Error).message}`] };
  }
  const consoleUrl = env.PARTNER_SYNC_CONSOLE_URL?.trim().replace(/\/+$/, '') || undefined;
  if (text === undefined) {
    let url: string | undefined;
    try {
      url = webhookUrlFromEnv(env);
    } catch (error) {
      return { errors: [(error as Error).message] };
    }
    if (!url) return { errors: [] };
    const channels = new Map<string, Channel>([['webhook', { name: 'webhook', type: 'webhook', url }]]);
    return { config: { channels, rules: [{ kinds: new Set(ALERT_KINDS), channels: ['webhook'] }], thresholds: { ...DEFAULT_THRESHOLDS }, repeatMs: DEFAULTS.repeatMinutes * 60_000, flapMs: DEFAULTS.flapMinutes * 60_000, ...(consoleUrl ? { consoleUrl } : {}) }, errors: [] };
  }
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (error) {
    return { errors: [`${file}: ${(error as Error).message.split('\n')[0]}`] };
  }
  const parsed = parseAlertConfig(data, file, env);
  if (parsed.config && !parsed.config.consoleUrl && consoleUrl) parsed.config = { ...parsed.config, consoleUrl };
  return parsed;
}
