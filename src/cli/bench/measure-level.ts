// One load level, measured as perf_analyzer does: back-to-back windows under continuous load, server
// statistics read at each window edge, until the last three windows agree or --max-trials runs out.
import { listReportedPercentiles, summarizeLatencies, type LatencySummary } from './latency-percentiles.ts';
import type { LoadGenerator } from './load-generator.ts';
import type { LoadWindow } from './load-window.ts';
import { addCounters, createZeroCounters, subtractCounters, summarizeServerCounters, type ServerBreakdown, type ServerCounters } from './server-stats.ts';
import { isStable, STABILITY_WINDOWS, type WindowMeasure } from './stability.ts';

export type LoadMode = 'concurrency' | 'request-rate';

export interface LevelSettings {
  mode: LoadMode;
  /** The concurrency or the request rate (requests/s). */
  level: number;
  batchSize: number;
  measurementIntervalMs: number;
  stabilityPercentage: number;
  maxTrials: number;
  /** --percentile: stabilize on this latency percentile instead of the average. */
  percentile: number | undefined;
}

export interface WindowProgress {
  mode: LoadMode;
  level: number;
  trial: number;
  maxTrials: number;
  inferPerSec: number;
  latencyUs: number;
  failed: number;
}

export interface LevelResult {
  mode: LoadMode;
  level: number;
  batchSize: number;
  stable: boolean;
  /** Windows measured at this level (the result merges the last three of them). */
  trials: number;
  /** Successful requests in the merged windows. */
  requestCount: number;
  durationMs: number;
  inferPerSec: number;
  /** Requests sent per second in the merged windows (open loop: compare with the target rate). */
  sendPerSec: number;
  delayedCount: number;
  latency: LatencySummary;
  /** The latency stability was judged on (avg, or the --percentile one), µs. */
  stabilizingLatencyUs: number;
  avgSendUs: number;
  avgRecvUs: number;
  avgResponseBytes: number;
  server: ServerBreakdown;
  /** Requests that failed at this level, in any window, and their error texts. */
  failedCount: number;
  errors: Map<string, number>;
  warnings: string[];
  /** Every request in a window failed: the level was abandoned (server down, model unloaded, ...). */
  abandoned: boolean;
}

interface MeasuredWindow {
  window: LoadWindow;
  server: ServerCounters;
  measure: WindowMeasure;
}

export interface MeasureLevelDeps {
  generator: LoadGenerator;
  /** Cumulative server counters for the model now. */
  readCounters: () => Promise<ServerCounters>;
  onWindow?: (progress: WindowProgress) => void;
  /** How long to let requests in flight finish after the last window before giving up on them. */
  drainMs?: number;
}

export async function measureLevel(settings: LevelSettings, deps: MeasureLevelDeps): Promise<LevelResult> {
  const { generator } = deps;
  const percentiles = listReportedPercentiles(settings.percentile);
  const measured: MeasuredWindow[] = [];
  let stable = false;
  let abandoned = false;
  let before = await deps.readCounters();
  generator.start();
  try {
    for (let trial = 1; trial <= settings.maxTrials; trial++) {
      await sleep(settings.measurementIntervalMs);
      const window = generator.takeWindow();
      const after = await deps.readCounters();
      const server = subtractCounters(after, before);
      before = after;
      const latency = summarizeLatencies(window.latenciesMs(), [settings.percentile ?? 50]);
      const measure: WindowMeasure = {
        inferPerSec: (window.okCount * settings.batchSize) / (window.durationMs / 1000),
        latency: settings.percentile === undefined ? latency.avgUs : (latency.percentilesUs.get(settings.percentile) ?? Number.NaN),
      };
      measured.push({ window, server, measure });
      deps.onWindow?.({
        mode: settings.mode,
        level: settings.level,
        trial,
        maxTrials: settings.maxTrials,
        inferPerSec: measure.inferPerSec,
        latencyUs: measure.latency,
        failed: window.failCount,
      });
      if (window.okCount === 0 && window.failCount > 0) {
        abandoned = true;
        break;
      }
      stable = isStable(
        measured.map((m) => m.measure),
        settings.stabilityPercentage,
      );
      if (stable) break;
    }
  } finally {
    await stopWithin(generator, deps.drainMs ?? Math.max(1000, settings.measurementIntervalMs));
  }
  const warnings: string[] = [];
  // perf_analyzer's rule for open-loop load: steady throughput with drifting latency is accepted, with a warning.
  if (
    !stable &&
    !abandoned &&
    settings.mode === 'request-rate' &&
    isStable(
      measured.map((m) => m.measure),
      settings.stabilityPercentage,
      false,
    )
  ) {
    stable = true;
    warnings.push('request latency is not stabilizing; try a lower request rate');
  }
  return mergeWindows(settings, measured, { stable, abandoned, warnings, percentiles });
}

function mergeWindows(
  settings: LevelSettings,
  measured: readonly MeasuredWindow[],
  extra: { stable: boolean; abandoned: boolean; warnings: string[]; percentiles: number[] },
): LevelResult {
  const merged = measured.slice(-STABILITY_WINDOWS);
  let ok = 0;
  let durationMs = 0;
  let sent = 0;
  let delayed = 0;
  let sendMs = 0;
  let recvMs = 0;
  let responseBytes = 0;
  let server = createZeroCounters();
  for (const { window, server: delta } of merged) {
    ok += window.okCount;
    durationMs += window.durationMs;
    sent += window.sentCount;
    delayed += window.delayedCount;
    sendMs += window.sendMsTotal;
    recvMs += window.recvMsTotal;
    responseBytes += window.responseBytesTotal;
    server = addCounters(server, delta);
  }
  const latencies = new Float64Array(ok);
  let offset = 0;
  for (const { window } of merged) {
    latencies.set(window.latenciesMs(), offset);
    offset += window.okCount;
  }
  const latency = summarizeLatencies(latencies, extra.percentiles);
  const errors = new Map<string, number>();
  let failedCount = 0;
  for (const { window } of measured) {
    failedCount += window.failCount;
    for (const [text, count] of window.errors) errors.set(text, (errors.get(text) ?? 0) + count);
  }
  const seconds = durationMs / 1000;
  const warnings = [...extra.warnings];
  if (!extra.stable && !extra.abandoned) {
    warnings.push(
      `unstable: no ${STABILITY_WINDOWS} consecutive windows within ${settings.stabilityPercentage}% after ${measured.length} trial(s); try a longer --measurement-interval`,
    );
  }
  const sendPerSec = seconds > 0 ? sent / seconds : 0;
  if (settings.mode === 'request-rate' && sendPerSec < settings.level * 0.95 && !extra.abandoned) {
    warnings.push(`sent ${sendPerSec.toFixed(1)} requests/s of the ${settings.level} asked: the load generator could not keep up`);
  }
  return {
    mode: settings.mode,
    level: settings.level,
    batchSize: settings.batchSize,
    stable: extra.stable,
    trials: measured.length,
    requestCount: ok,
    durationMs,
    inferPerSec: seconds > 0 ? (ok * settings.batchSize) / seconds : 0,
    sendPerSec,
    delayedCount: delayed,
    latency,
    stabilizingLatencyUs: settings.percentile === undefined ? latency.avgUs : (latency.percentilesUs.get(settings.percentile) ?? Number.NaN),
    avgSendUs: ok > 0 ? (sendMs / ok) * 1000 : 0,
    avgRecvUs: ok > 0 ? (recvMs / ok) * 1000 : 0,
    avgResponseBytes: ok > 0 ? responseBytes / ok : 0,
    server: summarizeServerCounters(server),
    failedCount,
    errors,
    warnings,
    abandoned: extra.abandoned,
  };
}

async function stopWithin(generator: LoadGenerator, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([generator.stop(), timeout]);
  clearTimeout(timer);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
