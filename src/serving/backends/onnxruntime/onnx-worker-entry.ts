// Main module of an ONNX Runtime instance's worker thread (started through onnx-worker-bootstrap.mjs):
// opens the session, checks the config against it, then answers run/release messages one at a time.
import { parentPort, workerData } from 'node:worker_threads';
import type { InferenceResult } from '../backend.ts';
import { convertTensorToWire, convertWireToTensor } from './convert-wire-tensor.ts';
import { createOnnxSession, readOnnxSignature } from './onnx-model-file.ts';
import { OnnxSessionRunner } from './onnx-session-runner.ts';
import {
  convertErrorToWire, type MainToWorkerMessage, type OnnxWorkerData, type WireResult, type WorkerToMainMessage,
} from './onnx-worker-protocol.ts';
import { validateOnnxConfig } from './validate-onnx-config.ts';

if (!parentPort) throw new Error('onnx-worker-entry.ts runs in a worker thread, not on the main thread');
const port = parentPort;

function post(message: WorkerToMainMessage, transfer: Set<ArrayBuffer> = new Set()): void {
  port.postMessage(message, [...transfer]);
}

async function openRunner({ config, modelFile, options }: OnnxWorkerData): Promise<OnnxSessionRunner> {
  const session = await createOnnxSession(config, modelFile, options);
  try {
    const signature = readOnnxSignature(session);
    validateOnnxConfig(config, signature);
    return new OnnxSessionRunner(config, session, signature);
  } catch (err) {
    await session.release();
    throw err;
  }
}

function convertResultToWire(result: InferenceResult, transfer: Set<ArrayBuffer>): WireResult {
  if (!result.ok) return { ok: false, error: convertErrorToWire(result.error) };
  // ORT's output arrays belong to this thread alone and are dropped after sending: move them, no copy.
  return { ok: true, outputs: result.outputs.map((t) => convertTensorToWire(t, 'move', transfer)) };
}

async function handle(runner: OnnxSessionRunner, message: MainToWorkerMessage): Promise<void> {
  try {
    if (message.type === 'release') {
      await runner.release();
      post({ type: 'released', id: message.id });
      return;
    }
    const batch = await runner.runBatch(message.requests.map((r) => ({
      inputs: r.inputs.map(convertWireToTensor),
      requestedOutputs: r.requestedOutputs,
    })));
    const transfer = new Set<ArrayBuffer>();
    const results = batch.results.map((r) => convertResultToWire(r, transfer));
    post({ type: 'ran', id: message.id, results, inputEnd: batch.inputEnd, inferEnd: batch.inferEnd }, transfer);
  } catch (err) {
    post({ type: 'failed', id: message.id, error: convertErrorToWire(err) });
  }
}

async function main(): Promise<void> {
  let runner: OnnxSessionRunner;
  try {
    runner = await openRunner(workerData as OnnxWorkerData);
  } catch (err) {
    post({ type: 'load-failed', error: convertErrorToWire(err) });
    return;
  }
  // A chain, not concurrent handlers: one session runs one batch at a time, and replies keep call order.
  let queue = Promise.resolve();
  port.on('message', (message: MainToWorkerMessage) => {
    queue = queue.then(() => handle(runner, message));
  });
  post({ type: 'loaded' });
}

await main();
