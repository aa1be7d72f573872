/**
 * A slot: one time a stream is due to run (a cron fire, a retry, a catch-up, or a tick held through
 * a store outage). Its own module, shared by the scheduler and the store-outage holder.
 */
export type SlotReason = 'schedule' | 'retry' | 'catch-up' | 'recovery';

export interface Slot {
  /** The slot's time: a run started at or after it (anywhere) means the slot is done. */
  at: Date;
  /** The cron fire time the run is scheduled for (a retry keeps its fire's time). */
  scheduledFor: Date;
  reason: SlotReason;
}
