// The ONNX Runtime backend (`backend: "onnxruntime"`, `platform: "onnxruntime_onnx"`): Triton-style
// auto-complete from the model file, and per instance a worker thread that owns one InferenceSession.
import type { InferenceSession } from 'onnxruntime-node';
import { unsupported } from '../../../core/errors.ts';
import type { ModelConfig } from '../../repository/model-config.ts';
import type { Backend, BackendFactory, BackendLoadContext } from '../backend.ts';
import { autoCompleteOnnxConfig, fillOnnxBackendFields, needsOnnxSignature } from './onnx-auto-complete.ts';
import { createOnnxSession, readOnnxSignature, resolveOnnxModelPath, type OnnxSignature } from './onnx-model-file.ts';
import { OnnxRuntimeInstance } from './onnx-runtime-instance.ts';
import { OnnxWorkerClient } from './onnx-worker-client.ts';
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

/**
 * Loads one instance. What needs no session (instance kind, model file, session options) is checked
 * here, before a thread is started; the worker opens the session and validates the config against it,
 * and its errors come back with their code and message unchanged. `workerUrl` is for tests.
 */
export async function loadOnnxInstance(context: BackendLoadContext, workerUrl?: URL): Promise<Backend> {
  const { config } = context;
  if (context.instanceKind === 'KIND_GPU') {
    throw unsupported(`model '${config.name}': KIND_GPU instances are not supported; the onnxruntime backend runs on CPU (use KIND_CPU)`);
  }
  const modelFile = await resolveOnnxModelPath(config, context.versionPath);
  const options = { ...createSessionOptions(config), logId: context.instanceName };
  const worker = await OnnxWorkerClient.start({
    instanceName: context.instanceName,
    workerData: { config, modelFile, options },
    workerUrl,
  });
  return new OnnxRuntimeInstance(config, worker);
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
