import type { Readable } from 'node:stream';
import { stderrTerminal } from '../terminal.js';

/** Where a command writes and reads; passed in so that tests and the CLI share one code path. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  stdin: Readable;
  /** True when stdout is a terminal (progress displays, colours). */
  isTty: boolean;
  /** True when stderr is a terminal: where the progress line of a run or backfill is drawn (default: isTty). */
  errIsTty?: boolean;
}

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** An error whose message is meant for the user as is; `exitCode` says which exit it maps to. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT_USAGE,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'CliError';
  }
}

export function processIo(): Io {
  return {
    out: (text) => process.stdout.write(text.endsWith('\n') ? text : text + '\n'),
    // Through the terminal's line writer: an error printed during a run never lands inside the progress line.
    err: (text) => stderrTerminal().line(text),
    stdin: process.stdin,
    isTty: Boolean(process.stdout.isTTY),
    errIsTty: Boolean(process.stderr.isTTY),
  };
}
