// Produces the complete ModelConfig of one model folder: config.pbtxt (or a JSON override, or
// nothing), then the backend's auto-complete from the model file, then Triton's validation.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HerdError } from '../../core/errors.ts';
import type { BackendFactory } from '../backends/backend.ts';
import type { ModelConfig } from './model-config.ts';
import { listVersionFolders } from './model-versions.ts';
import { parseJsonModelConfig, parsePbtxtModelConfig } from './parse-model-config.ts';
import { validateModelConfig } from './validate-model-config.ts';

export interface ConfigSource {
  modelName: string;
  modelPath: string;
  /** JSON text of a config given to the load API; replaces config.pbtxt when present. */
  overrideJson?: string;
}

export interface ResolvedModel {
  config: ModelConfig;
  factory: BackendFactory;
}

export async function loadModelConfig(source: ConfigSource, backends: ReadonlyMap<string, BackendFactory>): Promise<ResolvedModel> {
  const config = readConfig(source);
  const factory = resolveBackend(config, source, backends);
  let completed = config;
  if (factory.autoCompleteConfig) {
    const versions = listVersionFolders(source.modelPath);
    const latest = versions[versions.length - 1];
    if (latest !== undefined) {
      completed = await factory.autoCompleteConfig(config, source.modelPath, join(source.modelPath, String(latest)));
    }
  }
  validateModelConfig(completed, { expectedName: source.modelName, file: join(source.modelPath, 'config.pbtxt') });
  return { config: completed, factory };
}

function readConfig(source: ConfigSource): ModelConfig {
  if (source.overrideJson !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(source.overrideJson);
    } catch (err) {
      throw new HerdError('INVALID_ARG', `failed to parse the config override of model '${source.modelName}': ${(err as Error).message}`);
    }
    return parseJsonModelConfig(parsed, `config override of '${source.modelName}'`, source.modelName);
  }
  const file = join(source.modelPath, 'config.pbtxt');
  if (existsSync(file)) return parsePbtxtModelConfig(readFileSync(file, 'utf8'), file, source.modelName);
  // No config.pbtxt: Triton auto-completes from the model files; the backend is guessed from them.
  return parsePbtxtModelConfig(`name: "${source.modelName}"\n${guessBackendLine(source.modelPath)}`, file, source.modelName);
}

function guessBackendLine(modelPath: string): string {
  for (const version of listVersionFolders(modelPath)) {
    const dir = join(modelPath, String(version));
    if (existsSync(join(dir, 'model.onnx'))) return 'backend: "onnxruntime"\n';
    if (existsSync(join(dir, 'model.mjs')) || existsSync(join(dir, 'model.js'))) return 'backend: "js"\n';
  }
  return '';
}

function resolveBackend(config: ModelConfig, source: ConfigSource, backends: ReadonlyMap<string, BackendFactory>): BackendFactory {
  const name = config.backend || (config.platform === 'onnxruntime_onnx' ? 'onnxruntime' : config.platform);
  if (!name) {
    throw new HerdError('INVALID_ARG', `model '${source.modelName}': config must set 'backend' or 'platform' (supported backends: ${[...backends.keys()].join(', ')})`);
  }
  const factory = backends.get(name);
  if (!factory) {
    throw new HerdError('UNSUPPORTED', `model '${source.modelName}': backend '${name}' is not supported by Herd (supported: ${[...backends.keys()].join(', ')})`);
  }
  return factory;
}
