/** A plain aligned text table for terminal output; cells are cut to keep rows readable. */
export function formatTable(headers: readonly string[], rows: readonly (readonly (string | number)[])[], maxCell = 100): string {
  const cells = [headers, ...rows].map((row) => row.map((c) => {
    const s = String(c).replace(/\s+/g, ' ');
    return s.length > maxCell ? s.slice(0, maxCell - 1) + '…' : s;
  }));
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells
    .map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ').trimEnd())
    .join('\n');
}
