// The ONNX Runtime backend (`backend: "onnxruntime"`, `platform: "onnxruntime_onnx"`): Triton-style
// auto-complete from the model file, and one InferenceSession per instance on load.
import type { InferenceSession } from 'onnxruntime-node';
import { unsupported } from '../../../core/errors.ts';
import type { ModelConfig } from '../../repository/model-config.ts';
import type { Backend, BackendFactory, BackendLoadContext } from '../backend.ts';
import { autoCompleteOnnxConfig, fillOnnxBackendFields, needsOnnxSignature } from './onnx-auto-complete.ts';
import { createOnnxSession, readOnnxSignature, resolveOnnxModelPath, type OnnxSignature } from './onnx-model-file.ts';
import { OnnxRuntimeInstance } from './onnx-runtime-instance.ts';
import { createSessionOptions } from './session-options.ts';
import { validateOnnxConfig } from './validate-onnx-config.ts';

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

async function load(context: BackendLoadContext): Promise<Backend> {
  const { config } = context;
  if (context.instanceKind === 'KIND_GPU') {
    throw unsupported(`model '${config.name}': KIND_GPU instances are not supported; the onnxruntime backend runs on CPU (use KIND_CPU)`);
  }
  const file = await resolveOnnxModelPath(config, context.versionPath);
  const options = { ...createSessionOptions(config), logId: context.instanceName };
  const session = await createOnnxSession(config, file, options);
  try {
    const signature = readOnnxSignature(session);
    validateOnnxConfig(config, signature);
    return new OnnxRuntimeInstance(config, session, signature);
  } catch (err) {
    await session.release();
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

  load,
};
