// Main module of an ONNX Runtime instance's worker thread (started through onnx-worker-bootstrap.mjs):
// opens the session, checks the config against it, then answers run/release messages one at a time.
import { getPriority, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { convertTensorToWire, convertWireToTensor } from './convert-wire-tensor.ts';
import { openOnnxSessionRunner, type OnnxSessionRunner, type SessionRunResult } from './onnx-session-runner.ts';
import { convertErrorToWire, type MainToWorkerMessage, type OnnxWorkerData, type WireResult, type WorkerToMainMessage } from './onnx-worker-protocol.ts';

if (!parentPort) throw new Error('onnx-worker-entry.ts runs in a worker thread, not on the main thread');
const port = parentPort;

function post(message: WorkerToMainMessage, transfer: Set<ArrayBuffer> = new Set()): void {
  port.postMessage(message, [...transfer]);
}

function convertResultToWire(result: SessionRunResult, transfer: Set<ArrayBuffer>): WireResult {
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
    const batch = await runner.runBatch(
      message.runs.map((r) => ({
        inputs: r.inputs.map(convertWireToTensor),
        outputNames: r.outputNames,
      })),
    );
    const transfer = new Set<ArrayBuffer>();
    const results = batch.results.map((r) => convertResultToWire(r, transfer));
    post({ type: 'ran', id: message.id, results, inputEnd: batch.inputEnd, inferEnd: batch.inferEnd }, transfer);
  } catch (err) {
    post({ type: 'failed', id: message.id, error: convertErrorToWire(err) });
  }
}

/**
 * This thread computes at a lower scheduling priority (nice +10) than the event loop thread. On a machine
 * whose cores are all busy computing, the event loop (parsing every request, answering every refusal)
 * otherwise got only its fair share against the compute threads, and requests waited in socket buffers
 * (docs/decisions/onnx-worker-priority.md). Linux only: there setpriority acts on the calling thread, elsewhere on the whole process. ORT's own
 * threads, created after this, inherit it.
 */
const WORKER_NICE_INCREMENT = 10;

function lowerThreadPriority(): void {
  if (process.platform !== 'linux') return;
  try {
    setPriority(Math.min(19, getPriority() + WORKER_NICE_INCREMENT));
  } catch {
    // Not permitted here (a sandbox): compute keeps the default priority.
  }
}

async function main(): Promise<void> {
  lowerThreadPriority();
  let runner: OnnxSessionRunner;
  try {
    runner = await openOnnxSessionRunner(workerData as OnnxWorkerData);
  } catch (err) {
    post({ type: 'load-failed', error: convertErrorToWire(err) });
    return;
  }
  // A chain, not concurrent handlers: one session runs one batch at a time, and replies keep call order.
  let queue = Promise.resolve();
  port.on('message', (message: MainToWorkerMessage) => {
    queue = queue.then(() => handle(runner, message));
  });
  post({ type: 'loaded', modelInputs: [...runner.modelInputs] });
}

await main();
