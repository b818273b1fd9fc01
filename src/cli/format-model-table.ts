// The start-up report: one row per model version with its state, as tritonserver prints it; the
// reasons a model is not ready follow the table, one line each, so a long load error does not
// stretch every row to its width.
export interface ModelSummaryRow {
  name: string;
  state: string;
  versions: number[];
  reason: string;
}

export function formatModelTable(rows: readonly ModelSummaryRow[]): string {
  const reasons = rows.filter((r) => r.state !== 'READY' && r.reason !== '').map((r) => `${r.name}: ${r.reason}`);
  const status = (r: ModelSummaryRow) => (r.state === 'READY' || r.reason === '' ? r.state : `${r.state} (reason below)`);
  const lines = rows.flatMap((r) => (r.versions.length > 0 ? r.versions.map((v) => [r.name, String(v), status(r)]) : [[r.name, '-', status(r)]]));
  const table = [['Model', 'Version', 'Status'], ...lines];
  const widths = [0, 1, 2].map((i) => Math.max(...table.map((row) => (row[i] ?? '').length)));
  const rule = `+${widths.map((w) => '-'.repeat(w + 2)).join('+')}+`;
  const format = (row: string[]) => `| ${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [rule, format(table[0] as string[]), rule, ...lines.map(format), rule, ...reasons].join('\n');
}
