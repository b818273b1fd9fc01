// The `python` backend: Triton Python-backend models (`<version>/model.py` with class TritonPythonModel)
// served unchanged. Each instance runs in a Python process of its own (see python-model-instance.ts);
// auto_complete_config runs in a short-lived one before the instances exist, as in Triton.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HerdError } from '../../../core/errors.ts';
import { convertModelConfigToJson } from '../../model-config/convert-model-config-to-json.ts';
import type { ModelConfig } from '../../model-config/model-config.ts';
import { parseJsonModelConfig } from '../../model-config/parse-model-config.ts';
import type { BackendFactory, BackendLoadContext } from '../backend.ts';
import { createChildProcessEnv, readChildEnvNames } from '../child-process-env.ts';
import { CustomMetricRegistry } from '../../../metrics/custom-metric-registry.ts';
import type { ModelLogLevels } from './format-model-log.ts';
import type { BlsInference } from './python-bls-bridge.ts';
import { DEFAULT_PYTHON_SETTINGS, resolvePythonExecutable, type PythonBackendSettings } from './python-backend-options.ts';
import { startPythonInstance } from './python-model-instance.ts';
import { PythonStubProcess } from './python-stub-process.ts';
import { sweepStaleSegments } from './stub-shared-memory.ts';

export interface PythonBackendOptions {
  settings?: PythonBackendSettings;
  log?: (line: string) => void;
  /** Runs BLS calls; resolved when a call arrives, so app.ts can plug in a service built after the backends. */
  inference?: () => BlsInference | undefined;
  /** Where the stub's allow-listed variables come from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Variables that hold Herd's secrets (configured key and password variables): a model may not name them. */
  protectedEnvNames?: readonly string[];
  /** Where models' custom metrics (pb_utils.MetricFamily) go: the server's /metrics; default a registry of the backend's own, not shown. */
  metrics?: CustomMetricRegistry;
  /** The server's log settings now: which pb_utils.Logger records show. */
  logLevels?: () => ModelLogLevels;
}

export function createPythonBackend(options: PythonBackendOptions = {}): BackendFactory {
  const settings = options.settings ?? DEFAULT_PYTHON_SETTINGS;
  const log = options.log ?? (() => undefined);
  let swept = false;
  const metrics = options.metrics ?? new CustomMetricRegistry();
  const childEnv = (config: ModelConfig) => createChildProcessEnv(options.env ?? process.env, readChildEnvNames(config, { protectedNames: options.protectedEnvNames ?? [] }));
  return {
    name: 'python',
    autoCompleteConfig: (config, modelPath, versionPath) => autoCompletePythonConfig(config, modelPath, versionPath, settings, log, childEnv(config)),
    async load(context: BackendLoadContext) {
      const { config } = context;
      const modelFile = findModelFile(config, context.versionPath, context.version);
      const label = `${config.name}/${context.version}/${context.instanceName}`;
      if (!swept) {
        swept = true;
        const removed = sweepStaleSegments();
        if (removed.length > 0) log(`python backend: removed ${removed.length} shared memory segment(s) left by a Herd that is gone: ${removed.join(', ')}`);
      }
      return startPythonInstance({
        executable: resolvePythonExecutable(config, context.modelPath, settings),
        modelFile,
        env: childEnv(config),
        label,
        args: {
          model_config: JSON.stringify(convertModelConfigToJson(config)),
          model_instance_kind: context.instanceKind === 'KIND_GPU' ? 'GPU' : context.instanceKind === 'KIND_MODEL' ? 'MODEL' : 'CPU',
          model_instance_name: context.instanceName,
          model_instance_device_id: '0',
          model_repository: context.modelPath,
          model_version: String(context.version),
          model_name: config.name,
        },
        decoupled: config.model_transaction_policy?.decoupled === true,
        outputNames: config.output.map((o) => o.name),
        timeoutMs: settings.stubTimeoutSeconds * 1000,
        log,
        inference: options.inference?.(),
        sharedMemoryBytes: settings.shmDefaultByteSize,
        pollMicroseconds: settings.stubPollMicroseconds,
        metrics,
        ...(options.logLevels ? { logLevels: options.logLevels } : {}),
      });
    },
  };
}

function findModelFile(config: ModelConfig, versionPath: string, version: number): string {
  const file = join(versionPath, config.default_model_filename || 'model.py');
  if (!existsSync(file)) {
    throw new HerdError('NOT_FOUND', `python model '${config.name}' version ${version}: ${config.default_model_filename || 'model.py'} not found in the version folder`);
  }
  return file;
}

/**
 * Triton's auto-complete for Python models: the model's static auto_complete_config(config) edits the
 * config before any instance starts. A model.py that never mentions it is left alone without starting
 * an interpreter.
 */
async function autoCompletePythonConfig(
  config: ModelConfig,
  modelPath: string,
  versionPath: string,
  settings: PythonBackendSettings,
  log: (line: string) => void,
  env: Readonly<Record<string, string>>,
): Promise<ModelConfig> {
  const modelFile = findModelFile(config, versionPath, Number(versionPath.split('/').at(-1)));
  if (!readFileSync(modelFile, 'utf8').includes('auto_complete_config')) return config;
  const label = `${config.name} (auto_complete_config)`;
  const stub = new PythonStubProcess({
    executable: resolvePythonExecutable(config, modelPath, settings),
    modelFile,
    env,
    label,
    log,
    onFrame: (frame) => {
      if (frame.header.type === 'log') log(`python model ${label}: ${String(frame.header['message'])}`);
      // Triton offers custom metrics in initialize, execute and finalize only.
      if (frame.header.type === 'metrics' && frame.header['ask'] !== undefined) {
        stub.send({ type: 'metrics_reply', ask: frame.header['ask'], error: 'custom metrics are not available in auto_complete_config' });
      }
    },
    onExit: () => undefined,
  });
  try {
    const reply = await stub.call({ type: 'auto_complete', config: JSON.stringify(convertModelConfigToJson(config)) });
    if (reply.header.type === 'init_error') {
      log(`python model ${label} failed:\n${String(reply.header['traceback'] ?? '')}`);
      throw new HerdError('INVALID_ARG', `auto_complete_config of python model '${config.name}' failed: ${String(reply.header['error'])}`);
    }
    return parseJsonModelConfig(String(reply.header['config']), `auto_complete_config of python model '${config.name}'`, config.name, { validateIO: false });
  } finally {
    await stub.close(1000);
  }
}
