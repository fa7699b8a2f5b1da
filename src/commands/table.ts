/** A plain-text table: a header row and left-aligned columns separated by two spaces; long cells are cut. */
export function formatTable(headers: readonly string[], rows: readonly (readonly unknown[])[], maxCell = 40): string {
  const cell = (value: unknown): string => {
    const text = value === null || value === undefined ? '-' : String(value);
    return text.length > maxCell ? `${text.slice(0, maxCell - 1)}…` : text;
  };
  const cells = rows.map((row) => row.map(cell));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((row) => row[i]!.length)));
  const line = (row: readonly string[]) => row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  return [line(headers), ...cells.map(line)].join('\n');
}

/** An amount in USD for a table: cents when it has no finer part (12.5 → "12.50"), else as stored; null stays null. */
export function usdAmount(amount: number | null | undefined): string | null {
  if (amount === null || amount === undefined) return null;
  const cents = amount * 100;
  return Math.abs(cents - Math.round(cents)) < 1e-6 ? amount.toFixed(2) : String(amount);
}

/** "2024-05-01 12:34:56" (UTC) from an ISO time, compact for tables. */
export function shortTime(iso: string | null): string | null {
  return iso === null ? null : iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}
