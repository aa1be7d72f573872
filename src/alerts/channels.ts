/**
 * Where a message goes: a generic JSON webhook (the message as it is), a Slack-compatible
 * incoming webhook (`text` for notifications, `blocks` for the layout) or e-mail over SMTP
 * (nodemailer; STARTTLS required unless the server is on this machine). A delivery has a time
 * limit and one retry; a failure is a warning in the log naming the channel, never its address.
 */
import nodemailer from 'nodemailer';
import { isLoopbackHost } from '../config/secure-url.js';
import type { Channel } from './config.js';
import type { AlertMessage } from './message.js';

export interface ChannelSender {
  readonly name: string;
  /** Resolves when delivered; throws with the reason (no address in it). */
  send(message: AlertMessage): Promise<void>;
  close(): void;
}

export interface SenderOptions {
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** Slack's mrkdwn: &, < and > are escaped, the rest is shown as written. */
const mrkdwn = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function slackBody(m: AlertMessage): Record<string, unknown> {
  const fields = [
    ...(m.partner !== '-' ? [{ type: 'mrkdwn', text: `*Partner*\n${mrkdwn(m.partner)}` }] : []),
    ...(m.stream !== '-' ? [{ type: 'mrkdwn', text: `*Stream*\n${mrkdwn(m.stream)}` }] : []),
    { type: 'mrkdwn', text: `*Since*\n${m.since}` },
  ];
  return {
    text: m.text,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: m.title.slice(0, 150) } },
      { type: 'section', text: { type: 'mrkdwn', text: mrkdwn(m.detail).slice(0, 3000) } },
      { type: 'section', fields },
      { type: 'context', elements: [{ type: 'mrkdwn', text: `*Next:* ${mrkdwn(m.next)}${m.console_url ? ` · <${m.console_url}|open the console>` : ''}` }] },
    ],
  };
}

export function emailText(m: AlertMessage): { subject: string; text: string } {
  const lines = [
    m.title,
    '',
    m.detail,
    '',
    ...(m.partner !== '-' ? [`Partner: ${m.partner}`] : []),
    ...(m.stream !== '-' ? [`Stream:  ${m.stream}`] : []),
    `Since:   ${m.since}`,
    `At:      ${m.at}`,
    '',
    `Next: ${m.next}`,
    ...(m.console_url ? [`Console: ${m.console_url}`] : []),
    '',
    '-- partner-sync (config/alerts.yaml routes these messages)',
  ];
  return { subject: `[partner-sync] ${m.title}`, text: lines.join('\n') };
}

async function post(url: string, body: unknown, o: SenderOptions): Promise<void> {
  const res = await (o.fetch ?? fetch)(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(o.timeoutMs ?? 10_000),
  });
  await res.body?.cancel().catch(() => undefined);
  if (!res.ok) throw Object.assign(new Error(`answered ${res.status}`), { retry: res.status === 429 || res.status >= 500 });
}

export function channelSender(channel: Channel, o: SenderOptions = {}): ChannelSender {
  if (channel.type === 'email') {
    const u = new URL(channel.smtpUrl);
    const host = u.hostname.replace(/^\[|\]$/g, '');
    const secure = u.protocol === 'smtps:';
    const transport = nodemailer.createTransport({
      host,
      port: u.port ? Number(u.port) : secure ? 465 : 587,
      secure,
      // STARTTLS or nothing, except to a server on this machine.
      requireTLS: !secure && !isLoopbackHost(host),
      ...(u.username ? { auth: { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } } : {}),
      connectionTimeout: o.timeoutMs ?? 10_000,
      greetingTimeout: o.timeoutMs ?? 10_000,
      socketTimeout: o.timeoutMs ?? 10_000,
    });
    return {
      name: channel.name,
      async send(m) {
        const { subject, text } = emailText(m);
        try {
          await transport.sendMail({ from: channel.from, to: [...channel.to], subject, text });
        } catch (error) {
          // nodemailer's messages can quote the server's URL: keep the reason only.
          throw new Error(`SMTP: ${((error as { code?: string }).code ?? (error as Error).message).toString().replace(/smtps?:\/\/\S+/g, 'the SMTP server')}`, { cause: error });
        }
      },
      close: () => transport.close(),
    };
  }
  const url = channel.url;
  return {
    name: channel.name,
    async send(m) {
      try {
        await post(url, channel.type === 'slack' ? slackBody(m) : m, o);
      } catch (error) {
        const e = error as Error & { retry?: boolean };
        if (e.name === 'TimeoutError') throw new Error(`no answer within ${Math.round((o.timeoutMs ?? 10_000) / 1000)} s`, { cause: error });
        // fetch's own errors name the cause (ECONNREFUSED ...), never the URL.
        throw new Error(e.retry === undefined ? `cannot reach it: ${((e.cause as { code?: string } | undefined)?.code ?? e.message)}` : e.message, { cause: error });
      }
    },
    close: () => undefined,
  };
}
