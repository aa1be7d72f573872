/**
 * Injected time for worker tests: a clock that moves only when the test moves it, and timers that
 * fire in time order as it does. `advanceTo` fires each due timer at its own instant and lets the
 * work it started settle before moving on, so a simulated UTC day takes seconds.
 */
import type { TimerHandle, Timers } from '../../../src/worker/timers.js';

interface Pending {
  id: number;
  at: number;
  fn: () => void;
}

export const flushIo = async (turns = 5): Promise<void> => {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
};

export class FakeTimers implements Timers {
  private time: number;
  private seq = 0;
  private pending: Pending[] = [];

  constructor(start: string | Date) {
    this.time = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.time);
  }

  /** A clock function for the store and the sandbox. */
  readonly clock = (): Date => new Date(this.time);

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = ++this.seq;
    this.pending.push({ id, at: this.time + Math.max(0, ms), fn });
    return { id };
  }

  clearTimeout(handle: TimerHandle): void {
    this.pending = this.pending.filter((p) => p.id !== handle.id);
  }

  get timerCount(): number {
    return this.pending.length;
  }

  /** Fires every timer due up to `to`, in order, each at its instant, then settles; ends at `to`. */
  async advanceTo(to: string | Date, settle: () => Promise<void> = () => flushIo()): Promise<void> {
    const end = new Date(to).getTime();
    await settle();
    for (;;) {
      this.pending.sort((a, b) => a.at - b.at || a.id - b.id);
      const next = this.pending[0];
      if (!next || next.at > end) break;
      this.pending.shift();
      this.time = Math.max(this.time, next.at);
      next.fn();
      await settle();
    }
    this.time = Math.max(this.time, end);
    await settle();
  }

  advance(ms: number, settle?: () => Promise<void>): Promise<void> {
    return this.advanceTo(new Date(this.time + ms), settle);
  }
}
