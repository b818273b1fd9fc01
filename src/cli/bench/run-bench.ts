// `herd bench` end to end over HTTP or gRPC: read the model, build and check one request (its tensors in
// shared memory with --shared-memory system), sweep the load levels (a fresh pool per level), then
// print the table and write the CSV.
import { writeFile } from 'node:fs/promises';
import { HerdError, unavailable } from '../../core/errors.ts';
import type { InferOptions } from '../../client/kserve-types.ts';
import { placeInSystemSharedMemory, type BenchSharedMemory } from './bench-shared-memory.ts';
import type { BenchTransport } from './bench-transport.ts';
import { createGrpcBenchTransport } from './grpc-bench-transport.ts';
import { createHttpBenchTransport } from './http-bench-transport.ts';
import { ConcurrencyLoad } from './concurrency-load.ts';
import { createBenchInputs } from './create-bench-inputs.ts';
import { formatBenchTable } from './format-bench-table.ts';
import { listReportedPercentiles } from './latency-percentiles.ts';
import type { LoadGenerator } from './load-generator.ts';
import { measureLevel, type LevelResult } from './measure-level.ts';
import type { BenchOptions } from './parse-bench-options.ts';
import { levelAt } from './parse-range.ts';
import { ProgressDisplay, type ProgressStream } from './progress-display.ts';
import { RequestRateLoad } from './request-rate-load.ts';
import { createSeededRandom } from '../../core/seeded-random.ts';
import { convertStatisticsToCounters, type ServerCounters } from './server-stats.ts';
import { formatPerfCsv } from './write-perf-csv.ts';

export interface BenchIo {
  stdout: ProgressStream;
  stderr: ProgressStream;
}

export interface BenchReport {
  results: LevelResult[];
  /** The summary table printed on stdout. */
  table: string;
  /** The CSV text (also written to options.csvFile when set). */
  csv: string;
  requestBytes: number;
}

/**
 * Open loop keeps up to this many connections; more requests in flight wait in the pool, and that
 * wait is part of their latency, as it is for any client with a connection limit.
 */
const REQUEST_RATE_MAX_CONNECTIONS = 512;
const SEED = 20240601;

type AnyRequest = { readonly body: Buffer };

export async function runBench(options: BenchOptions, io: BenchIo): Promise<BenchReport> {
  const control: BenchTransport<AnyRequest> = options.protocol === 'grpc' ? createGrpcBenchTransport(options.url) : createHttpBenchTransport(options.url);
  try {
    return await runWithControl(options, io, control);
  } finally {
    await control.destroy();
  }
}

async function runWithControl<R extends AnyRequest>(options: BenchOptions, io: BenchIo, control: BenchTransport<R>): Promise<BenchReport> {
  const { model, version } = options;
  await control.serverLive(); // throws one clear UNAVAILABLE line when nothing answers
  const [metadata, config] = await Promise.all([control.modelMetadata(model, version), control.modelConfig(model, version)]);
  if (!(await control.modelReady(model, version))) {
    throw unavailable(`model '${model}'${version === undefined ? '' : ` version ${version}`} is not ready on ${control.where}`);
  }
  const random = createSeededRandom(SEED);
  const inputs = createBenchInputs({
    metadata,
    config,
    batchSize: options.batchSize,
    shapes: options.shapes,
    inputData: options.inputData,
    stringLength: options.stringLength,
    random,
  });
  let shm: BenchSharedMemory | undefined;
  if (options.sharedMemory === 'system') {
    shm = await placeInSystemSharedMemory(control, {
      inputs,
      metadata,
      batchSize: config.max_batch_size > 0 ? options.batchSize : undefined,
      outputByteSize: options.outputSharedMemorySize,
    });
  }
  try {
    const inferOptions: InferOptions = {
      binaryInputs: options.binary,
      binaryOutputs: options.binary,
      ...(version === undefined ? {} : { version }),
      ...(shm === undefined ? {} : { inputsInSharedMemory: shm.inputsInSharedMemory, outputs: shm.outputs }),
    };
    // One real request first: a shape or datatype the server refuses stops here with its message.
    await control.infer(model, inputs, inferOptions);
    const request = control.prepareInfer(model, inputs, inferOptions);
    return await sweep(options, io, control, request, metadata.name, random);
  } finally {
    await shm?.release();
  }
}

async function sweep<R extends AnyRequest>(
  options: BenchOptions,
  io: BenchIo,
  control: BenchTransport<R>,
  request: R,
  modelName: string,
  random: () => number,
): Promise<BenchReport> {
  const { model, version } = options;
  const progress = new ProgressDisplay(io.stderr);
  progress.note(describeSettings(options, request));
  const readCounters = async (): Promise<ServerCounters> => convertStatisticsToCounters(await control.modelStatistics(model, version), modelName, version);

  const results: LevelResult[] = [];
  for (let index = 0; ; index++) {
    const level = levelAt(options.range, index);
    if (level === undefined) break;
    const result = await measureOneLevel(options, control, request, level, { readCounters, progress, random });
    results.push(result);
    progress.note(describeVerdict(result));
    if (result.abandoned) break;
    if (options.latencyThresholdMs !== undefined && result.stabilizingLatencyUs >= options.latencyThresholdMs * 1000) {
      progress.note(`latency threshold ${options.latencyThresholdMs} ms reached: stopping the sweep`);
      break;
    }
  }
  progress.finish();

  const percentiles = listReportedPercentiles(options.percentile);
  const table = formatBenchTable(results, percentiles);
  io.stdout.write(`${table}\n`);
  const csv = formatPerfCsv(results, { mode: options.mode, percentiles, verbose: options.verboseCsv, percentile: options.percentile });
  if (options.csvFile !== undefined) await writeFile(options.csvFile, csv);

  const abandoned = results.find((r) => r.abandoned);
  if (abandoned !== undefined) {
    const [first] = abandoned.errors.keys();
    const what = abandoned.mode === 'concurrency' ? `concurrency ${abandoned.level}` : `request rate ${abandoned.level}/s`;
    throw new HerdError('UNAVAILABLE', `every request failed at ${what}: ${first ?? 'unknown error'}`);
  }
  return { results, table, csv, requestBytes: request.body.byteLength };
}

interface LevelDeps {
  readCounters: () => Promise<ServerCounters>;
  progress: ProgressDisplay;
  random: () => number;
}

async function measureOneLevel<R extends AnyRequest>(options: BenchOptions, control: BenchTransport<R>, request: R, level: number, deps: LevelDeps): Promise<LevelResult> {
  const concurrency = options.mode === 'concurrency';
  // A pool per level (HTTP: connections = concurrency; gRPC: one channel).
  const client = control.openPool(concurrency ? level : REQUEST_RATE_MAX_CONNECTIONS);
  try {
    const generator: LoadGenerator = concurrency ? new ConcurrencyLoad(client, request, level) : new RequestRateLoad(client, request, level, options.distribution, deps.random);
    return await measureLevel(
      {
        mode: options.mode,
        level,
        batchSize: options.batchSize,
        measurementIntervalMs: options.measurementIntervalMs,
        stabilityPercentage: options.stabilityPercentage,
        maxTrials: options.maxTrials,
        percentile: options.percentile,
      },
      { generator, readCounters: deps.readCounters, onWindow: (p) => deps.progress.window(p) },
    );
  } finally {
    // Anything still in flight after the drain is cut off: the next level must start clean.
    await client.destroy();
  }
}

function describeSettings(options: BenchOptions, request: AnyRequest): string {
  const load =
    options.mode === 'concurrency'
      ? `concurrency ${describeRange(options.range.start, options.range.end, options.range.step)}`
      : `request rate ${describeRange(options.range.start, options.range.end, options.range.step)}/s (${options.distribution})`;
  const stabilizing = options.percentile === undefined ? 'average latency' : `p${options.percentile} latency`;
  return [
    `herd bench: model '${options.model}'${options.version === undefined ? '' : ` version ${options.version}`} at ${options.url} (${options.protocol === 'grpc' ? 'gRPC' : 'HTTP'})`,
    `  batch size ${options.batchSize}, ${load}, ${describeTensors(options)}, request ${request.body.byteLength} bytes`,
    `  windows of ${options.measurementIntervalMs} ms until 3 agree within ${options.stabilityPercentage}% (throughput and ${stabilizing}), at most ${options.maxTrials}`,
  ].join('\n');
}

function describeTensors(options: BenchOptions): string {
  if (options.sharedMemory === 'system') return 'tensors in system shared memory';
  if (options.protocol === 'grpc') return 'raw tensors';
  return options.binary ? 'binary tensors' : 'JSON tensors';
}

function describeRange(start: number, end: number, step: number): string {
  if (end === start) return String(start);
  return `${start}..${end === 0 ? '∞' : end} step ${step}`;
}

function describeVerdict(r: LevelResult): string {
  const what = r.mode === 'concurrency' ? `concurrency ${r.level}` : `request rate ${r.level}/s`;
  if (r.abandoned) return `${what}: every request failed in a window; stopping`;
  const verdict = r.stable ? `stable after ${r.trials} window(s)` : `UNSTABLE after ${r.trials} window(s)`;
  const failed = r.failedCount > 0 ? `, ${r.failedCount} failed` : '';
  const latency =
    r.stabilizingLatencyUs === r.latency.avgUs
      ? `avg ${Math.round(r.latency.avgUs)} µs`
      : `avg ${Math.round(r.latency.avgUs)} µs, stabilizing latency ${Math.round(r.stabilizingLatencyUs)} µs`;
  return `${what}: ${r.inferPerSec.toFixed(1)} infer/s, ${latency}, response ${Math.round(r.avgResponseBytes)} bytes (${verdict}${failed})`;
}
