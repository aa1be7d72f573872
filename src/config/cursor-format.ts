/**
 * A REST change field written as an epoch number (`cursor_format: unix_millis | unix_seconds`):
 * the window's bounds are sent in the field's unit, and the values read are compared as the
 * instants they stand for. The cursor state keeps ISO 8601 UTC text whatever the format, so
 * jobs/cursor-state.ts compares every cursor the same way.
 */
import type { CursorFormat } from './definition.js';

const UNIT_MS: Record<CursorFormat, number> = { unix_millis: 1, unix_seconds: 1000 };

/**
 * A window bound (ISO 8601 with a zone) as the partner's filter takes it: text as it is, or the
 * epoch number. The lower bound is rounded down and the upper one up to the unit, so that a
 * record stamped inside the window is never left out by the rounding.
 */
export function cursorBound(iso: string, format: CursorFormat | undefined, side: 'from' | 'to'): string {
  if (format === undefined) return iso;
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new Error(`a window bound is not a date-time: ${iso}`);
  // Date.parse drops the digits past the millisecond: a bound with more (not all zeros) lies just after `ms`.
  const beyond = /[1-9]/.test(/\.\d{3}(\d+)/.exec(iso)?.[1] ?? '') ? 1 : 0;
  const unit = UNIT_MS[format];
  const value = side === 'from' ? Math.floor(ms / unit) : Math.ceil((ms + beyond) / unit);
  return String(value);
}

/**
 * A change field's value as ISO 8601 UTC text when the format says it is an epoch number (a
 * JSON number, or digits as text); any other value as it is.
 */
export function cursorInstant(value: unknown, format: CursorFormat | undefined): unknown {
  if (format === undefined) return value;
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : undefined;
  if (n === undefined || !Number.isFinite(n)) return value;
  const date = new Date(n * UNIT_MS[format]);
  return Number.isNaN(date.getTime()) ? value : date.toISOString();
}
