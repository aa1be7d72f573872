import type { SyncProgress } from '../../jobs/sync-stream.js';
/** One self-rewriting status line on a terminal (stderr), for long runs and backfills. */
export function progressLine(write: (s: string) => void = (s) => void process.stderr.write(s)): { update: (p: SyncProgress) => void; done: () => void } {
  let last = 0;
  let shown = false;
  return {
    update(p) {
      const now = Date.now();
      if (now - last < 100 && p.windowIndex < p.windows) return;
      last = now;
      shown = true;
      const pct = Math.floor(((p.windowIndex - 1) / Math.max(1, p.windows)) * 100);
      write(`\r\x1b[K${p.partner} ${p.stream}: window ${p.windowIndex}/${p.windows} (${p.window}) ${pct}%  pulled ${p.pulled}  loaded ${p.loaded}`);
    },
    done() {
      if (shown) write('\r\x1b[K');
    },
  };
}
