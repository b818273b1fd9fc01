// Produces the complete ModelConfig of one model folder: config.pbtxt (or a JSON override, or
// nothing), then the backend's auto-complete from the model file, then Triton's validation.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HerdError } from '../../core/errors.ts';
import type { BackendFactory } from '../backends/backend.ts';
import { CHILD_ENV_PARAMETER, readChildEnvNames } from '../backends/child-process-env.ts';
import type { ModelConfig } from '../model-config/model-config.ts';
import { checkModelFiles } from './check-model-files.ts';
import { listVersionFolders, selectVersions } from './model-versions.ts';
import { normalizeModelConfig, parseJsonModelConfig, parsePbtxtModelConfig, type ParseModelConfigOptions } from '../model-config/parse-model-config.ts';
import { validateModelConfig } from '../model-config/validate-model-config.ts';

export interface ConfigSource {
  modelName: string;
  modelPath: string;
  /** JSON text of a config given to the load API; replaces config.pbtxt when present. */
  overrideJson?: string;
  /** Whether a model of that name exists (ensemble steps are checked against it). */
  modelExists?: (name: string) => boolean;
  /** serving.allow_files_outside_model_dir; never applied to an override, whatever is passed. */
  allowFilesOutsideModelDir?: boolean;
}

export interface ResolvedModel {
  config: ModelConfig;
  /** Undefined for an ensemble: the ensemble scheduler runs it, no backend. */
  factory: BackendFactory | undefined;
}

export async function loadModelConfig(source: ConfigSource, backends: ReadonlyMap<string, BackendFactory>): Promise<ResolvedModel> {
  const versions = listVersionFolders(source.modelPath);
  const latest = versions[versions.length - 1];
  const versionPath = latest === undefined ? undefined : join(source.modelPath, String(latest));
  const entries = versionPath === undefined ? [] : readdirSync(versionPath);
  const options: ParseModelConfigOptions = { versionDirectoryEntries: entries, validateIO: false, modelExists: source.modelExists, refuseUnhonoured: true };
  const config = readConfig(source, entries, options);
  const factory = config.platform === 'ensemble' ? undefined : resolveBackend(config, source, backends);
  // Before auto-complete, which may start the model's own code (a Python model's auto_complete_config).
  const files = {
    modelName: source.modelName,
    modelPath: source.modelPath,
    versions: selectVersions(config.version_policy, versions),
    allowOutside: source.allowFilesOutsideModelDir === true && source.overrideJson === undefined,
  };
  checkModelFiles(config, files);
  if (source.overrideJson !== undefined) checkOverrideChildEnv(config, source, options);
  const completed = factory?.autoCompleteConfig && versionPath !== undefined ? await factory.autoCompleteConfig(config, source.modelPath, versionPath) : config;
  // As Triton's UpdateModelConfig: what auto-complete filled (max_batch_size...) gets its defaults too.
  normalizeModelConfig(completed);
  if (completed !== config) checkModelFiles(completed, { ...files, versions: selectVersions(completed.version_policy, versions) });
  validateModelConfig(completed, { expectedName: source.modelName, file: join(source.modelPath, 'config.pbtxt'), modelExists: source.modelExists });
  return { config: completed, factory };
}

function readConfig(source: ConfigSource, entries: readonly string[], options: ParseModelConfigOptions): ModelConfig {
  if (source.overrideJson !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(source.overrideJson);
    } catch (err) {
      throw new HerdError('INVALID_ARG', `the config override is not valid JSON: ${(err as Error).message}`);
    }
    return parseJsonModelConfig(withJsBackend(parsed, entries), `config override of '${source.modelName}'`, source.modelName, options);
  }
  const file = join(source.modelPath, 'config.pbtxt');
  if (existsSync(file)) return parsePbtxtModelConfig(readFileSync(file, 'utf8'), file, source.modelName, options);
  // No config.pbtxt: Triton auto-completes from the model files.
  const backend = hasJsModel(entries) ? 'backend: "js"\n' : '';
  return parsePbtxtModelConfig(`name: "${source.modelName}"\n${backend}`, file, source.modelName, options);
}

/**
 * A load-API override passes no variable to the model's processes that its config.pbtxt does not: whoever
 * may call the load API must not be able to hand a model more of Herd's environment than the operator did.
 */
function checkOverrideChildEnv(config: ModelConfig, source: ConfigSource, options: ParseModelConfigOptions): void {
  const named = readChildEnvNames(config);
  if (named.length === 0) return;
  const file = join(source.modelPath, 'config.pbtxt');
  let onDisk: readonly string[] = [];
  try {
    if (existsSync(file)) onDisk = readChildEnvNames(parsePbtxtModelConfig(readFileSync(file, 'utf8'), file, source.modelName, options));
  } catch {
    // A config.pbtxt that does not parse names nothing.
  }
  const extra = named.filter((n) => !onDisk.includes(n));
  if (extra.length > 0) {
    throw new HerdError(
      'INVALID_ARG',
      `model '${source.modelName}': parameter ${CHILD_ENV_PARAMETER} of a load-API config override names ${extra.join(', ')}, which the model's config.pbtxt does not; only the repository's config can pass variables to a model's processes`,
      { param: CHILD_ENV_PARAMETER },
    );
  }
}

/** Triton infers the backend of a config without one from the model file; Herd's own js files count too. */
function withJsBackend(parsed: unknown, entries: readonly string[]): unknown {
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return parsed;
  const config = parsed as Record<string, unknown>;
  if (config['backend'] || config['platform'] || !hasJsModel(entries)) return parsed;
  return { ...config, backend: 'js' };
}

function hasJsModel(entries: readonly string[]): boolean {
  return entries.includes('model.mjs') || entries.includes('model.js');
}

function resolveBackend(config: ModelConfig, source: ConfigSource, backends: ReadonlyMap<string, BackendFactory>): BackendFactory {
  const name = config.backend || (config.platform === 'onnxruntime_onnx' ? 'onnxruntime' : config.platform);
  if (!name) {
    throw new HerdError(
      'INVALID_ARG',
      `model '${source.modelName}': config must set 'backend' or 'platform', or the version folder must hold a model file Herd recognises (supported backends: ${[...backends.keys()].join(', ')})`,
    );
  }
  const factory = backends.get(name);
  if (!factory) {
    throw new HerdError('UNSUPPORTED', `model '${source.modelName}': backend '${name}' is not supported by Herd (supported: ${[...backends.keys()].join(', ')})`);
  }
  return factory;
}
