/**
 * The opaque pagination cursor: base64url of a small JSON document holding the keyset position
 * (the sort key of the last record served), so a page does not shift when records are added or
 * changed between requests. It also carries what the list was asked for (variant/entity, filters,
 * page size, page number), so that a client may send the cursor alone.
 */
export interface CursorState {
  /** `variant/entity` the cursor belongs to. */
  scope: string;
  /** The filter parameters of the request that started the walk. */
  filters: Record<string, string>;
  perPage: number;
  /** The page number this cursor leads to (meta.page of the next response). */
  page: number;
  /** Sort key of the last record served; null: from the start. */
  after: string[] | null;
}

interface CursorJson {
  v: 1;
  s: string;
  f: Record<string, string>;
  n: number;
  p: number;
  a: string[] | null;
}

export function encodeCursor(state: CursorState): string {
  const json: CursorJson = { v: 1, s: state.scope, f: state.filters, n: state.perPage, p: state.page, a: state.after };
  return Buffer.from(JSON.stringify(json), 'utf8').toString('base64url');
}

/** The state of a cursor, or undefined when the text is not a cursor this sandbox issued. */
export function decodeCursor(text: string): CursorState | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof json !== 'object' || json === null) return undefined;
  const c = json as Partial<Record<keyof CursorJson, unknown>>;
  if (c.v !== 1 || typeof c.s !== 'string') return undefined;
  if (!isPositiveInteger(c.n) || !isPositiveInteger(c.p)) return undefined;
  if (typeof c.f !== 'object' || c.f === null || Array.isArray(c.f)) return undefined;
  const filters: Record<string, string> = {};
  for (const [name, value] of Object.entries(c.f)) {
    if (typeof value !== 'string') return undefined;
    filters[name] = value;
  }
  let after: string[] | null = null;
  if (c.a !== null) {
    if (!Array.isArray(c.a) || !c.a.every((k): k is string => typeof k === 'string')) return undefined;
    after = c.a;
  }
  return { scope: c.s, filters, perPage: c.n, page: c.p, after };
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1;
}
