/**
 * Logging: winston, JSON lines (one object per line, for machines) or one readable line per entry
 * on a terminal. JSON when stderr is not a terminal or `LOG_FORMAT=json`; readable on a terminal
 * or with `LOG_FORMAT=text`. Every line passes through the redactor built from the definitions'
 * secret fields, so no secret value reaches a log, whatever code logged it, in either format.
 * Lines to stderr go through the terminal's line writer, so they never tangle with a progress line.
 */
import { Writable } from 'node:stream';
import winston from 'winston';
import { stderrTerminal } from './terminal.js';

export type Redact = (text: string) => string;
export const noRedaction: Redact = (text) => text;

export type Logger = winston.Logger;

export interface LoggerOptions {
  level?: string;
  /** JSON lines (default: `LOG_FORMAT`, else JSON when stderr is not a terminal). */
  json?: boolean;
  redact?: Redact;
  /** Where lines go (default stderr, keeping stdout for command output). */
  stream?: NodeJS.WritableStream;
  /** Fields on every line (partner, stream, run id). */
  defaultMeta?: Record<string, unknown>;
  /**
   * A server's log (a line per request): when stderr is not a terminal, the lines of one turn of
   * the event loop leave in one write. Each write to a pipe is a system call that holds the whole
   * process (Node writes pipes synchronously): at the push benchmark's rate it took a large share
   * of the server's CPU (bench/README.md, Push). Lines still leave within the turn that wrote them, and at exit.
   */
  batched?: boolean;
}

const redactFormat = winston.format((info, opts: unknown) => {
  const { redact } = opts as { redact: Redact };
  // Redact the whole serialised entry: secrets can sit in messages, metadata or error causes.
  let plain = true;
  const text = JSON.stringify(info, function (this: Record<string, unknown>, k: string, v: unknown) {
    if (v instanceof Error) {
      plain = false;
      return { message: v.message, name: v.name };
    }
    // The value before its toJSON (a Date's is a string already): anything but a plain object or array is not kept as it is.
    const given = k === '' ? v : this[k];
    if (plain && typeof given === 'object' && given !== null && !Array.isArray(given)) {
      const proto = Object.getPrototypeOf(given) as unknown;
      if (proto !== Object.prototype && proto !== null) plain = false;
    }
    return v;
  });
  const clean = redact(text);
  // Nothing redacted and nothing but plain values: the entry as it is (parsing it back cost a busy
  // server a line's time again, at a line per request).
  if (plain && clean === text) return info;
  const redacted = JSON.parse(clean) as winston.Logform.TransformableInfo;
  for (const key of Object.keys(info)) if (!(key in redacted)) delete (info as Record<string, unknown>)[key];
  return Object.assign(info, redacted);
});

/** JSON lines or readable lines: `LOG_FORMAT` (json | text) wins, else readable only on a terminal. */
export function jsonLogs(env: NodeJS.ProcessEnv = process.env, stderrIsTerminal = Boolean(process.stderr.isTTY)): boolean {
  const format = env.LOG_FORMAT?.trim().toLowerCase();
  if (format === 'json') return true;
  if (format === 'text') return false;
  return !stderrIsTerminal;
}

const CONTEXT_KEYS = ['partner', 'stream'];

/** `2026-11-23 12:56:00Z warn  acme transactions: message  (key=value, ...)`: one line, whatever the message holds. */
const readableLine = winston.format.printf((info) => {
  const { level, message, timestamp, ...meta } = info as Record<string, unknown>;
  const time = typeof timestamp === 'string' ? `${timestamp.slice(0, 19).replace('T', ' ')}Z` : '';
  const context = CONTEXT_KEYS.map((k) => meta[k]).filter((v) => v !== undefined).join(' ');
  const details = Object.entries(meta)
    .filter(([k, v]) => !CONTEXT_KEYS.includes(k) && v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(', ');
  const line = `${time} ${String(level).padEnd(5)} ${context === '' ? '' : `${context}: `}${String(message)}${details === '' ? '' : `  (${details})`}`;
  return line.replace(/\s*[\r\n]+\s*/g, '; ');
});

/** stderr through the terminal's line writer (winston writes one whole entry per write). */
function stderrLines(): NodeJS.WritableStream {
  const terminal = stderrTerminal();
  return new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      terminal.line(chunk.toString());
      done();
    },
  });
}

/** Lines for `write`, those of one turn of the event loop joined into one call, the rest at exit (see LoggerOptions.batched). */
export function batchedLines(write: (text: string) => void): NodeJS.WritableStream {
  let pending: string[] = [];
  const flush = (): void => {
    if (pending.length === 0) return;
    const text = pending.join('');
    pending = [];
    write(text);
  };
  process.on('exit', flush);
  return new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      if (pending.length === 0) setImmediate(flush);
      pending.push(chunk.toString());
      done();
    },
  });
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const json = options.json ?? jsonLogs();
  const stream = options.stream ?? (options.batched && !process.stderr.isTTY ? batchedLines((text) => void process.stderr.write(text)) : stderrLines());
  const readable = readableLine;
  return winston.createLogger({
    level: options.level ?? process.env.LOG_LEVEL ?? 'info',
    defaultMeta: options.defaultMeta,
    format: winston.format.combine(
      winston.format.timestamp(),
      redactFormat({ redact: options.redact ?? noRedaction }),
      json ? winston.format.json() : readable,
    ),
    transports: [new winston.transports.Stream({ stream })],
  });
}

/** A logger that drops everything (tests that do not look at logs). */
export function silentLogger(): Logger {
  return winston.createLogger({ silent: true, transports: [new winston.transports.Console({ silent: true })] });
}
