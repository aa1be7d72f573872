/**
 * Conditions in, messages out (docs/worker.md, Alerts). A condition that starts is one message,
 * its end another; one still true is sent again every `repeat_minutes`; one that starts again
 * within `flap_minutes` of its last start is not sent again until it has held that long (the
 * next message says how often it flapped). Each message goes to the channels of every rule that
 * names its kind and partner. What the router knows lives in the process: a restarted worker
 * sends a condition still true once more, as a start.
 *
 * Two ways in: `sync` with every condition of some kinds true now (the worker's minute check
 * reads them from the store), and `send` with the events of the parts that learn of a change
 * themselves (the freshness monitor, the scheduled reconcile, the FX feed, the store outage).
 */
import type { Logger, Redact } from '../log.js';
import type { AlertConfig, AlertKind } from './config.js';
import { channelSender, type ChannelSender, type SenderOptions } from './channels.js';
import { composeMessage, type AlertMessage, type Condition, type MessageStatus } from './message.js';

/** The events the worker's parts report (each starts or ends one condition). */
export interface AlertEvent {
  event:
    | 'freshness_breach' | 'freshness_recovered'
    | 'reconcile_difference' | 'reconcile_clean'
    | 'deletes_held'
    | 'fx_feed_failed' | 'fx_feed_recovered'
    | 'store_outage' | 'store_recovered';
  partner: string;
  stream: string;
  state: string;
  lag_seconds: number | null;
  target: string;
  detail: string;
  at: string;
}

export interface Alerter {
  send(event: AlertEvent): Promise<void>;
  /** Every condition of these kinds true now: new ones start, the others of these kinds end. */
  sync?(kinds: readonly AlertKind[], conditions: readonly Condition[], at: Date): Promise<void>;
  /** Sends the repeats that are due. */
  tick?(at: Date): Promise<void>;
}

const EVENT_OF: Record<AlertEvent['event'], { kind: AlertKind; starts: boolean }> = {
  freshness_breach: { kind: 'freshness_breach', starts: true },
  freshness_recovered: { kind: 'freshness_breach', starts: false },
  reconcile_difference: { kind: 'reconcile_difference', starts: true },
  reconcile_clean: { kind: 'reconcile_difference', starts: false },
  deletes_held: { kind: 'deletes_held', starts: true },
  fx_feed_failed: { kind: 'fx_feed_failed', starts: true },
  fx_feed_recovered: { kind: 'fx_feed_failed', starts: false },
  store_outage: { kind: 'store_outage', starts: true },
  store_recovered: { kind: 'store_outage', starts: false },
};

interface Active {
  condition: Condition;
  since: Date;
  /** The start was sent (not held back as a flap). */
  announced: boolean;
  lastSent?: Date;
}

export interface AlertRouterOptions {
  config: AlertConfig;
  logger: Logger;
  redact: Redact;
  senders?: SenderOptions;
}

const keyOf = (c: Pick<Condition, 'kind' | 'partner' | 'stream'>): string => `${c.kind}\u0000${c.partner}\u0000${c.stream}`;

export class AlertRouter implements Alerter {
  private readonly active = new Map<string, Active>();
  private readonly lastStart = new Map<string, number>();
  private readonly flaps = new Map<string, number>();
  private readonly senders = new Map<string, ChannelSender>();

  constructor(private readonly o: AlertRouterOptions) {
    for (const channel of o.config.channels.values()) this.senders.set(channel.name, channelSender(channel, o.senders));
  }

  /** The conditions true now, oldest first (for tests and the health detail). */
  conditions(): { condition: Condition; since: Date }[] {
    return [...this.active.values()].sort((a, b) => a.since.getTime() - b.since.getTime()).map((a) => ({ condition: a.condition, since: a.since }));
  }

  async send(event: AlertEvent): Promise<void> {
    const { kind, starts } = EVENT_OF[event.event];
    const condition: Condition = { kind, partner: event.partner, stream: event.stream, detail: event.detail };
    const at = new Date(event.at);
    if (starts) await this.raise(condition, at);
    else if (event.stream === '-') {
      // An end for the whole partner (a clean reconcile) ends the kind on each of its streams.
      for (const a of [...this.active.values()]) if (a.condition.kind === kind && a.condition.partner === event.partner) await this.clear(a.condition, at, event.detail);
    } else await this.clear(condition, at, event.detail);
  }

  async sync(kinds: readonly AlertKind[], conditions: readonly Condition[], at: Date): Promise<void> {
    const now = new Set(conditions.map(keyOf));
    const of = new Set(kinds);
    for (const [key, a] of [...this.active]) if (of.has(a.condition.kind) && !now.has(key)) await this.clear(a.condition, at);
    for (const c of conditions) await this.raise(c, at);
  }

  async raise(c: Condition, at: Date): Promise<void> {
    const key = keyOf(c);
    const known = this.active.get(key);
    if (known) {
      known.condition = c;
      return;
    }
    const last = this.lastStart.get(key);
    this.lastStart.set(key, at.getTime());
    const flapping = last !== undefined && at.getTime() - last < this.o.config.flapMs;
    const a: Active = { condition: c, since: at, announced: !flapping };
    this.active.set(key, a);
    if (flapping) {
      this.flaps.set(key, (this.flaps.get(key) ?? 0) + 1);
      this.o.logger.debug(`alert held back (flapping): ${c.kind} ${c.partner}/${c.stream}`, { event: 'alert_flapping', alert: c.kind, partner: c.partner, stream: c.stream });
      return;
    }
    await this.deliver(a, 'started', at);
  }

  async clear(c: Pick<Condition, 'kind' | 'partner' | 'stream'>, at: Date, detail?: string): Promise<void> {
    const key = keyOf(c);
    const a = this.active.get(key);
    if (!a) return;
    this.active.delete(key);
    if (!a.announced) return;
    if (detail !== undefined) a.condition = { ...a.condition, detail };
    else a.condition = { ...a.condition, detail: `no longer: ${a.condition.detail}` };
    await this.deliver(a, 'ended', at);
  }

  async tick(at: Date): Promise<void> {
    const { repeatMs, flapMs } = this.o.config;
    for (const a of this.active.values()) {
      // A start held back as a flap that has held since: it is news after all.
      if (!a.announced && at.getTime() - a.since.getTime() >= flapMs) {
        a.announced = true;
        await this.deliver(a, 'started', at);
      } else if (a.announced && repeatMs > 0 && a.lastSent && at.getTime() - a.lastSent.getTime() >= repeatMs) {
        await this.deliver(a, 'ongoing', at);
      }
    }
  }

  /** One test message through one channel; throws with the reason when it is not delivered. */
  async test(channelName: string, at: Date): Promise<AlertMessage> {
    const sender = this.senders.get(channelName);
    if (!sender) throw new Error(`no channel named ${JSON.stringify(channelName)} (channels: ${[...this.senders.keys()].join(', ') || 'none'})`);
    const message = composeMessage(
      { kind: 'run_failed', partner: '-', stream: '-', detail: `a test message to the channel ${channelName}: if you read this, alerts reach you here` },
      { status: 'test', since: at, at, flaps: 0, consoleUrl: this.o.config.consoleUrl, redact: this.o.redact },
    );
    await sender.send({ ...message, title: `TEST partner-sync alerts: ${channelName}`, next: 'nothing: this is a test (partner-sync alerts test)' });
    return message;
  }

  close(): void {
    for (const s of this.senders.values()) s.close();
  }

  private channelsFor(c: Condition): string[] {
    const names = new Set<string>();
    for (const rule of this.o.config.rules) {
      if (!rule.kinds.has(c.kind)) continue;
      if (rule.partners && c.partner !== '-' && !rule.partners.has(c.partner)) continue;
      for (const n of rule.channels) names.add(n);
    }
    return [...names];
  }

  private async deliver(a: Active, status: MessageStatus, at: Date): Promise<void> {
    const key = keyOf(a.condition);
    const flaps = this.flaps.get(key) ?? 0;
    this.flaps.delete(key);
    a.lastSent = at;
    const message = composeMessage(a.condition, { status, since: a.since, at, flaps, consoleUrl: this.o.config.consoleUrl, redact: this.o.redact });
    const channels = this.channelsFor(a.condition);
    const meta = { event: 'alert_sent', alert: a.condition.kind, status, partner: a.condition.partner, stream: a.condition.stream };
    if (channels.length === 0) {
      this.o.logger.debug(`alert not routed (no rule names ${a.condition.kind} for ${a.condition.partner}): ${message.title}`, meta);
      return;
    }
    await Promise.all(channels.map(async (name) => {
      const sender = this.senders.get(name);
      if (!sender) return;
      for (let attempt = 1; ; attempt++) {
        try {
          await sender.send(message);
          this.o.logger.debug(`alert sent to ${name}: ${message.title}`, { ...meta, channel: name });
          return;
        } catch (error) {
          if (attempt >= 2) {
            this.o.logger.warn(`alert to channel ${name} failed: ${this.o.redact((error as Error).message)}`, { ...meta, event: 'alert_failed', channel: name });
            return;
          }
          await new Promise((resolve) => setTimeout(resolve, 1_000));
        }
      }
    }));
  }
}
