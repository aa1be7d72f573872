/**
 * The process's stderr as the user's terminal sees it: log lines and one self-rewriting status
 * line (the progress of a run or backfill) share it. Written independently, a log line lands at
 * the end of the status line and the next redraw half-erases it. So every whole line goes through
 * here: the status line is erased, the line printed, the status line drawn again under it.
 * Nothing is held back (a warning shows when it happens), and on a stream that is not a terminal
 * no status line is ever drawn, so lines pass unchanged.
 */

const ERASE_LINE = '\r\x1b[K';

export class TerminalLines {
  private status = '';

  /** `columns`: the terminal's width (0 or undefined: unknown). */
  constructor(
    private readonly write: (text: string) => void,
    private readonly columns: () => number | undefined = () => undefined,
  ) {}

  /** A whole line (or several): above the status line, which is redrawn after it. */
  line(text: string): void {
    const body = text.endsWith('\n') ? text : text + '\n';
    this.write(this.status === '' ? body : ERASE_LINE + body + this.status);
  }

  /** Replaces the status line; it stays the last thing on the terminal until cleared. */
  showStatus(text: string): void {
    // A status line wider than the terminal wraps, and erasing then clears only its last row.
    const width = this.columns() ?? 0;
    this.status = width > 1 && text.length > width - 1 ? text.slice(0, width - 2) + '…' : text;
    this.write(ERASE_LINE + this.status);
  }

  clearStatus(): void {
    if (this.status === '') return;
    this.status = '';
    this.write(ERASE_LINE);
  }
}

let stderrLines: TerminalLines | undefined;

/** The one writer of this process's stderr (one terminal per process, whoever writes to it). */
export function stderrTerminal(): TerminalLines {
  stderrLines ??= new TerminalLines((text) => void process.stderr.write(text), () => process.stderr.columns);
  return stderrLines;
}
