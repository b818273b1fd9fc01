// The numbers `herd bench` reports, checked against perf_analyzer's rules: the three-window
// stability rule, rounded-index percentiles, server-side averages, and the CSV layout.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isStable } from '../../src/cli/bench/stability.ts';
import { listReportedPercentiles, pickPercentile, summarizeLatencies } from '../../src/cli/bench/latency-percentiles.ts';
import { convertStatisticsToCounters, subtractCounters, summarizeServerCounters } from '../../src/cli/bench/server-stats.ts';
import { createPerfCsvHeader, formatCppDouble, formatPerfCsv } from '../../src/cli/bench/write-perf-csv.ts';
import type { LevelResult } from '../../src/cli/bench/measure-level.ts';
import type { ModelStatistics } from '../../src/client/kserve-types.ts';

const m = (inferPerSec: number, latency: number) => ({ inferPerSec, latency });

test('stable: the last three windows within the percentage on throughput and latency', () => {
  assert.equal(isStable([m(100, 10), m(105, 10.5)], 10), false, 'fewer than three windows');
  assert.equal(isStable([m(100, 10), m(105, 10.5), m(109, 10.9)], 10), true);
  assert.equal(isStable([m(100, 10), m(105, 10.5), m(111, 10)], 10), false, 'throughput max/min 1.11');
  assert.equal(isStable([m(100, 10), m(100, 10), m(100, 11.1)], 10), false, 'latency max/min 1.11');
  assert.equal(isStable([m(100, 10), m(100, 11), m(100, 11)], 10), true, 'exactly 1.10 is within');
  assert.equal(isStable([m(1, 99), m(100, 10), m(101, 10), m(102, 10)], 10), true, 'only the last three count');
  assert.equal(isStable([m(100, 10), m(100, 10), m(0, Number.NaN)], 10), false, 'an empty window is never stable');
  assert.equal(isStable([m(100, 10), m(100, 20), m(100, 40)], 10, false), true, 'throughput only (open-loop fallback)');
  assert.equal(isStable([m(100, 10), m(120, 10), m(100, 10)], 25), true, 'the percentage is a parameter');
});

test('percentiles pick by rounded index over sorted values, like perf_analyzer', () => {
  const sorted = Float64Array.from({ length: 10 }, (_, i) => (i + 1) * 10); // 10..100
  // index = floor(p/100 * 9 + 0.5): p50 → 5 (60), p90 → 8 (90), p95 → 9 (100), p99 → 9 (100)
  assert.equal(pickPercentile(sorted, 50), 60);
  assert.equal(pickPercentile(sorted, 90), 90);
  assert.equal(pickPercentile(sorted, 95), 100);
  assert.equal(pickPercentile(sorted, 99), 100);
  assert.equal(pickPercentile(sorted, 0), 10);
  assert.equal(pickPercentile([7], 99), 7);
  assert.ok(Number.isNaN(pickPercentile([], 50)));
  assert.deepEqual(listReportedPercentiles(undefined), [50, 90, 95, 99]);
  assert.deepEqual(listReportedPercentiles(85), [50, 85, 90, 95, 99]);
  assert.deepEqual(listReportedPercentiles(95), [50, 90, 95, 99]);
});

test('latency summary: ms in, µs out, sorted, sample standard deviation', () => {
  const s = summarizeLatencies(Float64Array.from([3, 1, 2, 4]), [50, 99]);
  assert.equal(s.count, 4);
  assert.equal(s.avgUs, 2500);
  assert.ok(Math.abs(s.stdUs - 1290.994) < 0.01);
  assert.equal(s.percentilesUs.get(50), 3000); // index floor(0.5*3+0.5) = 2
  assert.equal(s.percentilesUs.get(99), 4000);
  assert.equal(summarizeLatencies(new Float64Array(0), [50]).count, 0);
});

const stats = (name: string, version: string, n: number): ModelStatistics => ({
  name,
  version,
  last_inference: 0,
  inference_count: n * 2,
  execution_count: n,
  inference_stats: {
    success: { count: n, ns: n * 1_000_000 },
    fail: { count: 0, ns: 0 },
    queue: { count: n, ns: n * 100_000 },
    compute_input: { count: n, ns: n * 50_000 },
    compute_infer: { count: n, ns: n * 600_000 },
    compute_output: { count: n, ns: n * 50_000 },
  },
});

test('server breakdown: deltas of /stats averaged per request; overhead is what queue and compute leave', () => {
  const before = convertStatisticsToCounters([stats('m', '1', 10), stats('m', '2', 5), stats('other', '1', 99)], 'm');
  const after = convertStatisticsToCounters([stats('m', '1', 30), stats('m', '2', 5), stats('other', '1', 500)], 'm');
  assert.equal(before.successCount, 15, 'versions summed, other models ignored');
  const b = summarizeServerCounters(subtractCounters(after, before));
  assert.deepEqual(
    [b.successCount, b.inferenceCount, b.requestUs, b.queueUs, b.computeInputUs, b.computeInferUs, b.computeOutputUs, b.overheadUs],
    [20, 40, 1000, 100, 50, 600, 50, 200],
  );
  assert.equal(convertStatisticsToCounters([stats('m', '1', 10), stats('m', '2', 5)], 'm', '2').successCount, 5, '-x picks one version');
  assert.equal(summarizeServerCounters(subtractCounters(before, before)).queueUs, 0, 'no requests: zeros, not NaN');
});

test("CSV header is perf_analyzer's, in its order", () => {
  const base =
    'Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,' +
    'Server Compute Infer,Server Compute Output,Client Recv,p50 latency,p90 latency,p95 latency,p99 latency';
  const header = (mode: 'concurrency' | 'request-rate', percentile: number | undefined, verbose: boolean) =>
    createPerfCsvHeader({ mode, percentiles: listReportedPercentiles(percentile), verbose, percentile }).join(',');
  assert.equal(header('concurrency', undefined, false), base);
  assert.equal(header('request-rate', undefined, false), base.replace('Concurrency', 'Request Rate'));
  assert.equal(header('concurrency', undefined, true), `${base},Avg latency,request/response,response wait`);
  // With --percentile perf_analyzer adds its column in order and drops Avg latency from the verbose set.
  assert.equal(header('concurrency', 85, true), `${base.replace('p50 latency,', 'p50 latency,p85 latency,')},request/response,response wait`);
});

function level(level: number, inferPerSec: number): LevelResult {
  return {
    mode: 'concurrency',
    level,
    batchSize: 1,
    stable: true,
    trials: 3,
    requestCount: 100,
    durationMs: 1000,
    inferPerSec,
    sendPerSec: inferPerSec,
    delayedCount: 0,
    latency: {
      count: 100,
      avgUs: 2000.9,
      stdUs: 1,
      percentilesUs: new Map([
        [50, 1900.5],
        [90, 2500],
        [95, 2600],
        [99, 3000.99],
      ]),
    },
    stabilizingLatencyUs: 2000.9,
    avgSendUs: 30.7,
    avgRecvUs: 10.2,
    avgResponseBytes: 64,
    server: {
      successCount: 100,
      failCount: 0,
      inferenceCount: 100,
      executionCount: 100,
      requestUs: 1500,
      queueUs: 100.4,
      computeInputUs: 50,
      computeInferUs: 1200.8,
      computeOutputUs: 40,
      overheadUs: 108.8,
    },
    failedCount: 0,
    errors: new Map(),
    warnings: [],
    abandoned: false,
  };
}

test('CSV rows: whole µs, network = client wait minus server time, sorted by throughput', () => {
  const options = { mode: 'concurrency' as const, percentiles: [50, 90, 95, 99], verbose: true, percentile: undefined };
  const csv = formatPerfCsv([level(2, 1500.25), level(1, 987.654321), { ...level(3, 0), requestCount: 0 }], options);
  const lines = csv.trimEnd().split('\n');
  assert.equal(lines.length, 3, 'a level with no successful request has no row');
  // wait = 2000.9 - 30.7 - 10.2 = 1960; server = 100.4 + 50 + 1200.8 + 40 = 1391.2; network 568.8 → 568
  assert.equal(lines[1], '1,987.654,30,568,100,50,1200,40,10,1900,2500,2600,3000,2000,40,1960');
  assert.equal(lines[2]?.split(',').slice(0, 2).join(','), '2,1500.25');
});

test('doubles print like C++ iostreams (%g, 6 significant digits)', () => {
  assert.equal(formatCppDouble(69.2), '69.2');
  assert.equal(formatCppDouble(1234.5678), '1234.57');
  assert.equal(formatCppDouble(100), '100');
  assert.equal(formatCppDouble(123456.7), '123457');
  assert.equal(formatCppDouble(1500000), '1.5e+06');
  assert.equal(formatCppDouble(999999.7), '1e+06');
  assert.equal(formatCppDouble(0.00012), '0.00012');
  assert.equal(formatCppDouble(0.000012), '1.2e-05');
  assert.equal(formatCppDouble(0), '0');
});
