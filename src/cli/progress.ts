import type { SyncProgress } from '../../jobs/sync-stream.js';
import { stderrTerminal, type TerminalLines } from '../terminal.js';

/**
 * One self-rewriting status line on a terminal (stderr), for long runs and backfills. It is the
 * terminal's status line: log lines written meanwhile print above it, never inside it.
 */
export function progressLine(terminal: TerminalLines = stderrTerminal()): { update: (p: SyncProgress) => void; done: () => void } {
  let last = 0;
  return {
    update(p) {
      const now = Date.now();
      if (now - last < 100 && p.windowIndex < p.windows) return;
      last = now;
      const pct = Math.floor(((p.windowIndex - 1) / Math.max(1, p.windows)) * 100);
      terminal.showStatus(`${p.partner} ${p.stream}: window ${p.windowIndex}/${p.windows} (${p.window}) ${pct}%  pulled ${p.pulled}  loaded ${p.loaded}`);
    },
    done() {
      terminal.clearStatus();
    },
  };
}
