// The markdown of the h2load/wrk bench: the raw cells, then gRPC ÷ HTTP for Herd and for the bare floor
// beside the targets (throughput ≥ 100%, CPU/request ≤ 1.0×, or the floor's ratio where it is worse).
import type { CellResult } from './interleaved-cells.ts';

export type CellKey = 'herdHttp' | 'herdGrpc' | 'floorHttp' | 'floorGrpc';

export interface MeasuredCell {
  model: string;
  concurrency: number;
  results: Record<CellKey, CellResult>;
}

const LABELS: Record<CellKey, string> = { herdHttp: 'Herd HTTP (wrk)', herdGrpc: 'Herd gRPC (h2load)', floorHttp: 'floor node:http (wrk)', floorGrpc: 'floor node:http2 (h2load)' };
const FEW_REQUESTS = 200;
const n = (x: number) => Math.round(x).toLocaleString('en-US');
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const times = (x: number) => `${x.toFixed(2)}×`;

/** No latency column: wrk corrects its latencies for coordinated omission and h2load does not, so they do not compare. */
export function renderCells(cells: readonly MeasuredCell[]): string[] {
  const lines = ['| model | c | target | req/s | server CPU µs/request | requests | failed |', '| --- | ---: | --- | ---: | ---: | ---: | ---: |'];
  for (const cell of cells)
    for (const key of Object.keys(LABELS) as CellKey[]) {
      const r = cell.results[key];
      lines.push(`| ${cell.model} | ${cell.concurrency} | ${LABELS[key]} | ${n(r.perSecond)} | ${r.cpuUsPerRequest.toFixed(1)} | ${n(r.requests)} | ${r.failed} |`);
    }
  return lines;
}

export function renderRatios(cells: readonly MeasuredCell[]): string[] {
  const lines = [
    '| model | c | Herd gRPC ÷ HTTP req/s | floor | target | met | Herd gRPC ÷ HTTP CPU/request | floor | target | met |',
    '| --- | ---: | ---: | ---: | ---: | :---: | ---: | ---: | ---: | :---: |',
  ];
  for (const { model, concurrency, results: r } of cells) {
    const few = Math.min(r.herdHttp.requests, r.herdGrpc.requests) < FEW_REQUESTS ? ' †' : '';
    const throughput = r.herdGrpc.perSecond / r.herdHttp.perSecond;
    const floorThroughput = r.floorGrpc.perSecond / r.floorHttp.perSecond;
    const cpu = r.herdGrpc.cpuUsPerRequest / r.herdHttp.cpuUsPerRequest;
    const floorCpu = r.floorGrpc.cpuUsPerRequest / r.floorHttp.cpuUsPerRequest;
    const throughputTarget = Math.min(1, floorThroughput);
    const cpuTarget = Math.max(1, floorCpu);
    lines.push(
      `| ${model}${few} | ${concurrency} | ${pct(throughput)} | ${pct(floorThroughput)} | ≥ ${pct(throughputTarget)} | ${throughput >= throughputTarget ? 'yes' : 'no'} | ${times(cpu)} | ${times(floorCpu)} | ≤ ${times(cpuTarget)} | ${cpu <= cpuTarget ? 'yes' : 'no'} |`,
    );
  }
  if (lines.some((l) => l.includes(' †')))
    lines.push(
      '',
      `† fewer than ${FEW_REQUESTS} requests completed by one of Herd's targets: the CPU booked includes work on requests a window's end cut, so CPU/request reads high.`,
    );
  return lines;
}
