// The summary `herd bench` prints on stdout when it is done: one row per level, client latencies and
// the server's breakdown side by side (µs), then any warnings and error texts under the table.
import type { LevelResult } from './measure-level.ts';

export function formatBenchTable(results: readonly LevelResult[], percentiles: readonly number[]): string {
  if (results.length === 0) return 'no levels measured';
  const mode = results[0]?.mode === 'request-rate' ? 'Request rate' : 'Concurrency';
  const header = [
    mode,
    'Infer/s',
    'Requests',
    'Srv ok',
    'Avg µs',
    ...percentiles.map((p) => `p${p} µs`),
    'Send µs',
    'Recv µs',
    'Srv queue',
    'Srv in',
    'Srv infer',
    'Srv out',
    'Srv overhead',
    'Failed',
    'Stable',
  ];
  const rows = results.map((r) => {
    const s = r.server;
    return [
      String(r.level),
      r.requestCount > 0 ? r.inferPerSec.toFixed(1) : '-',
      // The client's successes next to the server's (/stats delta): a gap means requests the server never counted.
      String(r.requestCount),
      String(s.successCount),
      us(r.latency.avgUs),
      ...percentiles.map((p) => us(r.latency.percentilesUs.get(p))),
      us(r.avgSendUs),
      us(r.avgRecvUs),
      us(s.queueUs),
      us(s.computeInputUs),
      us(s.computeInferUs),
      us(s.computeOutputUs),
      us(s.overheadUs),
      String(r.failedCount),
      r.abandoned ? 'failed' : r.stable ? 'yes' : 'NO',
    ];
  });
  const table = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...table.map((row) => (row[i] ?? '').length)));
  const rule = `+${widths.map((w) => '-'.repeat(w + 2)).join('+')}+`;
  // Numbers right-aligned so digits line up; the header follows its column.
  const format = (row: string[]) => `| ${row.map((cell, i) => cell.padStart(widths[i] ?? 0)).join(' | ')} |`;
  const lines = [rule, format(header), rule, ...rows.map(format), rule];
  for (const r of results) {
    const label = `${mode.toLowerCase()} ${r.level}`;
    for (const w of r.warnings) lines.push(`warning (${label}): ${w}`);
    for (const [text, count] of r.errors) lines.push(`errors (${label}): ${count} × ${text}`);
  }
  return lines.join('\n');
}

function us(value: number | undefined): string {
  return value === undefined || !Number.isFinite(value) ? '-' : String(Math.round(value));
}
