import { Writable } from 'node:stream';
import { createLogger, type Logger, type Redact } from '../../../src/log.js';

export interface LogLine {
  level: string;
  message: string;
  [key: string]: unknown;
}

/** A JSON-lines winston logger whose lines a test reads back. */
export function captureLogger(options: { level?: string; redact?: Redact } = {}): { logger: Logger; lines: LogLine[]; text(): string } {
  const lines: LogLine[] = [];
  let raw = '';
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      const text = chunk.toString();
      raw += text;
      for (const line of text.split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  const logger = createLogger({ json: true, stream, level: options.level ?? 'debug', redact: options.redact });
  return { logger, lines, text: () => raw };
}
