// The messages between an ONNX Runtime instance (main thread) and the worker thread that owns its session.
// Plain structured-cloneable data only: class instances (HerdError, ort.Tensor) do not survive postMessage.
import type { InferenceSession } from 'onnxruntime-node';
import type { DataType } from '../../../core/datatype.ts';
import { HerdError, type ErrorCode } from '../../../core/errors.ts';
import type { NumericTensorData } from '../../../core/tensor.ts';
import type { ModelConfig } from '../../model-config/model-config.ts';

/** What a worker is started with (its `workerData`). */
export interface OnnxWorkerData {
  config: ModelConfig;
  /** Resolved `model.onnx` path. */
  modelFile: string;
  options: InferenceSession.SessionOptions;
}

/** A tensor as it crosses threads; BYTES travels packed in one buffer (see convert-wire-tensor.ts). */
export type WireTensor =
  | { kind: 'numeric'; name: string; datatype: DataType; shape: number[]; data: NumericTensorData }
  | { kind: 'bytes'; name: string; datatype: DataType; shape: number[]; bytes: Uint8Array; offsets: Uint32Array };

export interface WireError {
  code: ErrorCode;
  message: string;
}

/**
 * One session.run: the inputs of one request, or of several requests concatenated along the batch dim
 * (the main thread validates and concatenates, see plan-onnx-batch.ts), and the outputs to fetch.
 */
export interface WireRun {
  inputs: WireTensor[];
  outputNames: string[];
}

/** A run's outputs, in `outputNames` order, or why the run failed. */
export type WireResult = { ok: true; outputs: WireTensor[] } | { ok: false; error: WireError };

export type MainToWorkerMessage = { type: 'run'; id: number; runs: WireRun[] } | { type: 'release'; id: number };

/**
 * `inputEnd` / `inferEnd` are process.hrtime.bigint() readings taken in the worker: it reads the same
 * monotonic clock as the main thread, so they can be used as ExecutionMarks as they are.
 */
export interface RanMessage {
  type: 'ran';
  id: number;
  results: WireResult[];
  inputEnd: bigint;
  inferEnd: bigint;
}

export type WorkerToMainMessage =
  /** `modelInputs`: the ONNX file's input names, which the main thread checks requests against. */
  | { type: 'loaded'; modelInputs: string[] }
  | { type: 'load-failed'; error: WireError }
  | RanMessage
  | { type: 'released'; id: number }
  /** A call failed as a whole (a bug or a broken session), as opposed to one run of a batch. */
  | { type: 'failed'; id: number; error: WireError };

export function convertErrorToWire(err: unknown): WireError {
  if (err instanceof HerdError) return { code: err.code, message: err.message };
  return { code: 'INTERNAL', message: err instanceof Error ? err.message : String(err) };
}

export function convertWireToError(wire: WireError): HerdError {
  return new HerdError(wire.code, wire.message);
}
