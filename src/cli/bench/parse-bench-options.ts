// `herd bench` flags (strings, as commander hands them over) to checked options. Flag names and
// defaults are perf_analyzer's; a bad value is one INVALID_ARG line naming the flag.
import { invalidArg, unsupported } from '../../core/errors.ts';
import type { InputDataKind } from './create-bench-inputs.ts';
import type { LoadMode } from './measure-level.ts';
import { parseConcurrencyRange, parseRequestRateRange, type LoadRange } from './parse-range.ts';
import type { RequestDistribution } from './request-rate-load.ts';

export interface BenchFlags {
  modelName?: string;
  url?: string;
  modelVersion?: string;
  batchSize?: string;
  concurrencyRange?: string;
  requestRateRange?: string;
  requestDistribution?: string;
  protocol?: string;
  binary?: boolean;
  json?: boolean;
  measurementInterval?: string;
  stabilityPercentage?: string;
  maxTrials?: string;
  shape?: string[];
  inputData?: string;
  stringLength?: string;
  filename?: string;
  verboseCsv?: boolean;
  percentile?: string;
  latencyThreshold?: string;
  sharedMemory?: string;
  outputSharedMemorySize?: string;
}

export interface BenchOptions {
  model: string;
  version: string | undefined;
  url: string;
  protocol: 'http' | 'grpc';
  /** system: tensors in system shared memory regions, requests carry references (perf_analyzer's --shared-memory). */
  sharedMemory: 'none' | 'system';
  /** Bytes of each output region whose size the model does not fix (BYTES, variable dims). */
  outputSharedMemorySize: number;
  batchSize: number;
  mode: LoadMode;
  range: LoadRange;
  distribution: RequestDistribution;
  /** Binary tensor data extension for inputs and outputs (tritonclient's default); false: JSON. */
  binary: boolean;
  measurementIntervalMs: number;
  stabilityPercentage: number;
  maxTrials: number;
  shapes: Map<string, number[]>;
  inputData: InputDataKind;
  stringLength: number;
  csvFile: string | undefined;
  verboseCsv: boolean;
  percentile: number | undefined;
  /** Stop the sweep once the stabilizing latency reaches this (ms); undefined: run the whole range. */
  latencyThresholdMs: number | undefined;
}

export const DEFAULT_URL = 'localhost:8000';
export const DEFAULT_GRPC_URL = 'localhost:8001';
/** perf_analyzer's --output-shared-memory-size default. */
const DEFAULT_OUTPUT_SHARED_MEMORY_SIZE = 102400;

export function parseBenchOptions(flags: BenchFlags): BenchOptions {
  const model = flags.modelName?.trim() ?? '';
  if (model === '') throw invalidArg('-m/--model-name is required: the model to benchmark');
  const protocol = (flags.protocol ?? 'http').toLowerCase();
  if (protocol !== 'http' && protocol !== 'grpc') throw invalidArg(`-i/--protocol must be http or grpc, got '${flags.protocol}'`);
  if (flags.binary === true && flags.json === true) throw invalidArg('--binary and --json are exclusive: pick one tensor encoding');
  if (protocol === 'grpc' && flags.json === true) throw invalidArg('--json applies to HTTP only: gRPC always carries tensors as raw bytes');
  const sharedMemory = (flags.sharedMemory ?? 'none').toLowerCase();
  if (sharedMemory === 'cuda') throw unsupported('--shared-memory cuda needs GPUs; this Herd is CPU-only: use none or system');
  if (sharedMemory !== 'none' && sharedMemory !== 'system') throw invalidArg(`--shared-memory must be none, system or cuda, got '${flags.sharedMemory}'`);
  if (flags.concurrencyRange !== undefined && flags.requestRateRange !== undefined) {
    throw invalidArg('--concurrency-range and --request-rate-range are exclusive: measure one load shape per run');
  }
  const mode: LoadMode = flags.requestRateRange !== undefined ? 'request-rate' : 'concurrency';
  const range = mode === 'request-rate' ? parseRequestRateRange(flags.requestRateRange as string) : parseConcurrencyRange(flags.concurrencyRange ?? '1');
  const latencyThreshold = parseNumber('-l/--latency-threshold', flags.latencyThreshold ?? '0', { min: 0 });
  if (range.end === 0 && latencyThreshold === 0) {
    throw invalidArg(`an open ${mode === 'concurrency' ? '--concurrency-range' : '--request-rate-range'} (end 0) needs -l/--latency-threshold to know where to stop`);
  }
  const distribution = (flags.requestDistribution ?? 'constant').toLowerCase();
  if (distribution !== 'constant' && distribution !== 'poisson') {
    throw invalidArg(`--request-distribution must be constant or poisson, got '${flags.requestDistribution}'`);
  }
  const inputData = (flags.inputData ?? 'random').toLowerCase();
  if (inputData !== 'random' && inputData !== 'zero') {
    throw invalidArg(`--input-data must be random or zero, got '${flags.inputData}' (data files are not supported yet)`);
  }
  const percentile = flags.percentile === undefined ? undefined : parseInteger('--percentile', flags.percentile, { min: 1, max: 99 });
  return {
    model,
    version: flags.modelVersion === undefined || flags.modelVersion === '' ? undefined : flags.modelVersion,
    url: flags.url ?? (protocol === 'grpc' ? DEFAULT_GRPC_URL : DEFAULT_URL),
    protocol,
    sharedMemory,
    outputSharedMemorySize: parseInteger('--output-shared-memory-size', flags.outputSharedMemorySize ?? String(DEFAULT_OUTPUT_SHARED_MEMORY_SIZE), { min: 1 }),
    batchSize: parseInteger('-b/--batch-size', flags.batchSize ?? '1', { min: 1 }),
    mode,
    range,
    distribution,
    binary: flags.json !== true,
    measurementIntervalMs: parseInteger('-p/--measurement-interval', flags.measurementInterval ?? '5000', { min: 1 }),
    stabilityPercentage: parseNumber('-s/--stability-percentage', flags.stabilityPercentage ?? '10', { min: 0, exclusiveMin: true }),
    maxTrials: parseInteger('-r/--max-trials', flags.maxTrials ?? '10', { min: 1 }),
    shapes: parseShapes(flags.shape ?? []),
    inputData,
    stringLength: parseInteger('--string-length', flags.stringLength ?? '16', { min: 0 }),
    csvFile: flags.filename === undefined || flags.filename === '' ? undefined : flags.filename,
    verboseCsv: flags.verboseCsv === true,
    percentile,
    latencyThresholdMs: latencyThreshold > 0 ? latencyThreshold : undefined,
  };
}

/** `--shape NAME:d1,d2` (repeatable): dims without the batch dim, as perf_analyzer takes them. */
export function parseShapes(values: readonly string[]): Map<string, number[]> {
  const shapes = new Map<string, number[]>();
  for (const value of values) {
    const colon = value.lastIndexOf(':');
    const name = colon > 0 ? value.slice(0, colon) : '';
    const dimsText = colon > 0 ? value.slice(colon + 1) : '';
    if (name === '' || dimsText.trim() === '') {
      throw invalidArg(`--shape '${value}': expected NAME:d1,d2,... (dims without the batch dim), e.g. INPUT0:3,224,224`);
    }
    const dims = dimsText.split(',').map((d) => {
      const trimmed = d.trim();
      if (!/^\d+$/.test(trimmed) || Number(trimmed) < 1) {
        throw invalidArg(`--shape '${value}': dim '${trimmed}' is not a whole number >= 1`);
      }
      return Number(trimmed);
    });
    if (shapes.has(name)) throw invalidArg(`--shape gives input '${name}' twice`);
    shapes.set(name, dims);
  }
  return shapes;
}

interface Bounds {
  min: number;
  max?: number;
  exclusiveMin?: boolean;
}

function parseInteger(flag: string, text: string, bounds: Bounds): number {
  const trimmed = text.trim();
  if (!/^[+-]?\d+$/.test(trimmed)) throw invalidArg(`${flag} must be a whole number, got '${text}'`);
  return checkBounds(flag, Number(trimmed), bounds);
}

function parseNumber(flag: string, text: string, bounds: Bounds): number {
  const value = Number(text.trim());
  if (text.trim() === '' || !Number.isFinite(value)) throw invalidArg(`${flag} must be a number, got '${text}'`);
  return checkBounds(flag, value, bounds);
}

function checkBounds(flag: string, value: number, bounds: Bounds): number {
  if (bounds.exclusiveMin === true ? value <= bounds.min : value < bounds.min) {
    throw invalidArg(`${flag} must be ${bounds.exclusiveMin === true ? 'greater than' : 'at least'} ${bounds.min}, got ${value}`);
  }
  if (bounds.max !== undefined && value > bounds.max) throw invalidArg(`${flag} must be at most ${bounds.max}, got ${value}`);
  return value;
}
