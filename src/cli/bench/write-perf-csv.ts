// `-f results.csv` in perf_analyzer's format (report_writer.cc): the same header names and order,
// values in whole µs, rows sorted by increasing Inferences/Second, so existing spreadsheets and
// model_analyzer-style parsers read Herd's file unchanged.
import type { LevelResult, LoadMode } from './measure-level.ts';

export interface PerfCsvOptions {
  mode: LoadMode;
  /** The latency percentiles reported (50, 90, 95, 99 and the --percentile one), ascending. */
  percentiles: readonly number[];
  /** --verbose-csv: adds Avg latency (only without --percentile), request/response and response wait. */
  verbose: boolean;
  /** --percentile, when given. */
  percentile: number | undefined;
}

export function createPerfCsvHeader(options: PerfCsvOptions): string[] {
  const header = [
    options.mode === 'concurrency' ? 'Concurrency' : 'Request Rate',
    'Inferences/Second',
    'Client Send',
    'Network+Server Send/Recv',
    'Server Queue',
    'Server Compute Input',
    'Server Compute Infer',
    'Server Compute Output',
    'Client Recv',
    ...options.percentiles.map((p) => `p${p} latency`),
  ];
  if (options.verbose) {
    if (options.percentile === undefined) header.push('Avg latency');
    header.push('request/response', 'response wait');
  }
  return header;
}

export function formatPerfCsv(results: readonly LevelResult[], options: PerfCsvOptions): string {
  const rows = results
    .filter((r) => r.requestCount > 0)
    .sort((a, b) => a.inferPerSec - b.inferPerSec)
    .map((r) => formatRow(r, options).join(','));
  return `${[createPerfCsvHeader(options).join(','), ...rows].join('\n')}\n`;
}

function formatRow(r: LevelResult, options: PerfCsvOptions): string[] {
  const us = (value: number) => String(Math.max(0, Math.floor(Number.isFinite(value) ? value : 0)));
  const s = r.server;
  const compute = s.computeInputUs + s.computeInferUs + s.computeOutputUs;
  // perf_analyzer: the client's wait (latency minus send and receive) less what the server accounts
  // for; it subtracts numbers from two clocks, so it is floored at 0.
  const wait = r.latency.avgUs - r.avgSendUs - r.avgRecvUs;
  const networkAndServer = wait - (s.queueUs + compute);
  const row = [
    r.mode === 'concurrency' ? String(r.level) : formatCppDouble(r.level),
    formatCppDouble(r.inferPerSec),
    us(r.avgSendUs),
    us(networkAndServer),
    us(s.queueUs),
    us(s.computeInputUs),
    us(s.computeInferUs),
    us(s.computeOutputUs),
    us(r.avgRecvUs),
    ...options.percentiles.map((p) => us(r.latency.percentilesUs.get(p) ?? 0)),
  ];
  if (options.verbose) {
    const send = Math.floor(r.avgSendUs);
    const recv = Math.floor(r.avgRecvUs);
    if (options.percentile === undefined) row.push(us(r.latency.avgUs));
    row.push(String(send + recv), us(Math.floor(r.latency.avgUs) - send - recv));
  }
  return row;
}

/** A double as C++ iostreams print it by default (%g, six significant digits): 69.2, 1234.57, 1.5e+06. */
export function formatCppDouble(value: number): string {
  if (!Number.isFinite(value)) return String(value).toLowerCase();
  if (value === 0) return '0';
  const [mantissa = '0', exponentText = '0'] = value.toExponential(5).split('e');
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 6) {
    const trimmed = mantissa.includes('.') ? mantissa.replace(/0+$/, '').replace(/\.$/, '') : mantissa;
    const sign = exponent < 0 ? '-' : '+';
    return `${trimmed}e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  const fixed = value.toFixed(Math.max(0, 5 - exponent));
  return fixed.includes('.') ? fixed.replace(/0+$/, '').replace(/\.$/, '') : fixed;
}
