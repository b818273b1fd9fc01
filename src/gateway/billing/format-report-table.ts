// Plain-text tables for the billing reports (herd usage, herd cost): a header, a rule, rows, and an
// optional footer under a second rule; numbers right-aligned so amounts line up on the decimal point.

export interface ReportTable {
  header: string[];
  /** Per column: 'right' for numbers and money. */
  align: Array<'left' | 'right'>;
  rows: string[][];
  footer?: string[][];
}

export function formatReportTable(table: ReportTable): string {
  const all = [table.header, ...table.rows, ...(table.footer ?? [])];
  const widths = table.header.map((_, i) => Math.max(...all.map((row) => [...(row[i] ?? '')].length)));
  const pad = (cell: string, i: number) => {
    const gap = ' '.repeat(Math.max(0, (widths[i] ?? 0) - [...cell].length));
    return table.align[i] === 'right' ? gap + cell : cell + gap;
  };
  const line = (row: string[]) =>
    row
      .map((cell, i) => pad(cell, i))
      .join('  ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  const out = [line(table.header), rule, ...table.rows.map(line)];
  if (table.footer && table.footer.length > 0) out.push(rule, ...table.footer.map(line));
  return out.join('\n');
}

/** 1234567 → "1,234,567". */
export function formatCount(n: number): string {
  return Math.round(n)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
