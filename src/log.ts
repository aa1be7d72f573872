/**
 * Logging: winston, JSON lines (one object per line, for machines) or a readable line on a
 * terminal. Every line passes through the redactor built from the definitions' secret fields,
 * so no secret value reaches a log, whatever code logged it.
 */
import winston from 'winston';

export type Redact = (text: string) => string;
export const noRedaction: Redact = (text) => text;

export type Logger = winston.Logger;

export interface LoggerOptions {
  level?: string;
  /** JSON lines (default when stdout is not a terminal). */
  json?: boolean;
  redact?: Redact;
  /** Where lines go (default stderr, keeping stdout for command output). */
  stream?: NodeJS.WritableStream;
  /** Fields on every line (partner, stream, run id). */
  defaultMeta?: Record<string, unknown>;
}

const redactFormat = winston.format((info, opts: unknown) => {
  const { redact } = opts as { redact: Redact };
  // Redact the whole serialised entry: secrets can sit in messages, metadata or error causes.
  const redacted = JSON.parse(redact(JSON.stringify(info, (_k, v: unknown) => (v instanceof Error ? { message: v.message, name: v.name } : v)))) as winston.Logform.TransformableInfo;
  for (const key of Object.keys(info)) if (!(key in redacted)) delete (info as Record<string, unknown>)[key];
  return Object.assign(info, redacted);
});

export function createLogger(options: LoggerOptions = {}): Logger {
  const json = options.json ?? !process.stderr.isTTY;
  const stream = options.stream ?? process.stderr;
  const readable = winston.format.printf((info) => {
    const { level, message, timestamp, ...meta } = info as Record<string, unknown>;
    const context = ['partner', 'stream', 'run_id'].map((k) => meta[k]).filter((v) => v !== undefined).join(' ');
    const rest = Object.entries(meta).filter(([k]) => !['partner', 'stream', 'run_id'].includes(k));
    return `${String(timestamp)} ${String(level)}${context ? ` [${context}]` : ''} ${String(message)}${rest.length ? ' ' + JSON.stringify(Object.fromEntries(rest)) : ''}`;
  });
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
