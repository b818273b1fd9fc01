// The ONNX Runtime backend (`backend: "onnxruntime"`, `platform: "onnxruntime_onnx"`): Triton-style
// auto-complete from the model file, and per instance one InferenceSession, in a worker thread of its own
// or, for models measured at load to compute in microseconds, on the main thread (`execution_thread`).
import type { InferenceSession } from 'onnxruntime-node';
import type { Clock } from '../../../core/clock.ts';
import { unsupported } from '../../../core/errors.ts';
import type { ModelConfig } from '../../model-config/model-config.ts';
import type { BackendFactory, BackendLoadContext } from '../backend.ts';
import { autoCompleteOnnxConfig, fillOnnxBackendFields, needsOnnxSignature } from './onnx-auto-complete.ts';
import { createOnnxSession, readOnnxSignature, resolveOnnxModelPath, type OnnxSignature } from './onnx-model-file.ts';
import { chooseAutoExecutionThread, type ProbeCost } from './choose-execution-thread.ts';
import { parseExecutionThread } from './execution-thread.ts';
import { OnnxMainThreadHost } from './onnx-main-thread-host.ts';
import { OnnxRuntimeInstance } from './onnx-runtime-instance.ts';
import type { OnnxSessionHost } from './onnx-session-host.ts';
import { OnnxSplitHost } from './onnx-split-host.ts';
import { OnnxWorkerHost } from './onnx-worker-host.ts';
import { createSessionOptions } from './session-options.ts';

// Reading a signature needs no optimisation and must not grab cores while other models load.
const SIGNATURE_SESSION_OPTIONS: InferenceSession.SessionOptions = {
  executionProviders: ['cpu'],
  graphOptimizationLevel: 'disabled',
  intraOpNumThreads: 1,
  extra: { 'session.intra_op.allow_spinning': '0' },
};

async function readSignature(config: ModelConfig, versionPath: string): Promise<OnnxSignature> {
  const file = await resolveOnnxModelPath(config, versionPath);
  const session = await createOnnxSession(config, file, SIGNATURE_SESSION_OPTIONS);
  try {
    return readOnnxSignature(session);
  } finally {
    await session.release();
  }
}

/** Seams for tests: a misbehaving worker entry, a manual clock for the restart backoff, the auto limit and probe costs. */
export interface OnnxLoadOptions {
  workerUrl?: URL;
  clock?: Clock;
  /** execution_thread "auto"'s limit on the probe run (AUTO_MAIN_THREAD_MAX_RUN_US); tests pin the outcome. */
  autoMaxRunUs?: number;
  /** What execution_thread "auto"'s probe runs are taken to cost, instead of timing them; tests pin the split with it. */
  autoProbeCost?: ProbeCost;
}

/**
 * Loads one instance. What needs no session (instance kind, model file, session options, execution
 * thread) is checked here, before a thread is started; the host opens the session and validates the
 * config against it, and a worker's errors come back with their code and message unchanged.
 */
export async function loadOnnxInstance(context: BackendLoadContext, { workerUrl, clock, autoMaxRunUs, autoProbeCost }: OnnxLoadOptions = {}): Promise<OnnxRuntimeInstance> {
  const { config } = context;
  if (context.instanceKind === 'KIND_GPU') {
    throw unsupported(`model '${config.name}': KIND_GPU instances are not supported; the onnxruntime backend runs on CPU (use KIND_CPU)`);
  }
  const modelFile = await resolveOnnxModelPath(config, context.versionPath);
  const options = { ...createSessionOptions(config), logId: context.instanceName };
  const workerData = { config, modelFile, options };
  const thread = parseExecutionThread(config);
  const startWorker = () => OnnxWorkerHost.start({ instanceName: context.instanceName, workerData, workerUrl, clock });
  let host: OnnxSessionHost;
  if (thread === 'main') host = await OnnxMainThreadHost.open(workerData);
  else if (thread === 'worker') host = await startWorker();
  else {
    const choice = await chooseAutoExecutionThread(workerData, autoMaxRunUs, autoProbeCost);
    if (!choice.host) host = await startWorker();
    else if (choice.mainMaxBatch === undefined) host = choice.host;
    else host = await addWorker(choice.host, choice.mainMaxBatch, startWorker);
  }
  return new OnnxRuntimeInstance(config, host);
}

/** The split host of "auto": the probed main-thread session, and a worker for the batches too large for it. */
async function addWorker(main: OnnxMainThreadHost, mainMaxBatch: number, startWorker: () => Promise<OnnxWorkerHost>): Promise<OnnxSplitHost> {
  try {
    return new OnnxSplitHost(main, await startWorker(), mainMaxBatch);
  } catch (err) {
    await main.close();
    throw err;
  }
}

export const onnxRuntimeBackend: BackendFactory = {
  name: 'onnxruntime',

  async autoCompleteConfig(config: ModelConfig, _modelPath: string, versionPath: string): Promise<ModelConfig> {
    const filled = fillOnnxBackendFields(config);
    // Like Triton, a config that lists inputs and outputs is taken as is; load() validates it against the model.
    if (!needsOnnxSignature(filled)) return filled;
    return autoCompleteOnnxConfig(filled, await readSignature(filled, versionPath));
  },

  load: (context) => loadOnnxInstance(context),
};
