/**
 * A plain aligned text table for terminal output. Cells are cut to `maxCell` characters to keep
 * columns readable, except the last one (usually a message), which is shown whole.
 */
export function formatTable(headers: readonly string[], rows: readonly (readonly (string | number)[])[], maxCell = 60): string {
  const cells = [headers, ...rows].map((row) => row.map((c, i) => {
    const s = String(c).replace(/\s+/g, ' ');
    return i < row.length - 1 && s.length > maxCell ? s.slice(0, maxCell - 1) + '…' : s;
  }));
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells
    .map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ').trimEnd())
    .join('\n');
}
