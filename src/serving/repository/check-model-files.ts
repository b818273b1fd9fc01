// Every file a model config names, checked against the model's folder before any of it is read or run:
// the model file of each version, label files, warmup data and the Python environment (EXECUTION_ENV_PATH).
import { join } from 'node:path';
import { DEFAULT_MODEL_FILENAMES } from '../backends/js/load-js-model.ts';
import { expandExecutionEnvPath } from '../backends/python/python-backend-options.ts';
import type { ModelConfig } from '../model-config/model-config.ts';
import { WARMUP_DATA_FOLDER } from '../warmup/create-warmup-requests.ts';
import { confineModelFile } from './confine-model-file.ts';

/** The files a backend looks for when the config names none (its own resolution then follows them). */
const DEFAULT_FILES: Readonly<Record<string, readonly string[]>> = {
  js: DEFAULT_MODEL_FILENAMES,
  python: ['model.py'],
  onnxruntime: ['model.onnx'],
};

export interface ModelFiles {
  modelName: string;
  modelPath: string;
  /** The version folders that will load. */
  versions: readonly number[];
  allowOutside: boolean;
}

/** Throws INVALID_ARG naming the field of the first file that resolves outside the model folder. */
export function checkModelFiles(config: ModelConfig, files: ModelFiles): void {
  const confine = (field: string, value: string, base: string, path = value) =>
    confineModelFile({ modelName: files.modelName, modelPath: files.modelPath, field, value, path, base, allowOutside: files.allowOutside });
  const backend = config.backend || (config.platform === 'onnxruntime_onnx' ? 'onnxruntime' : config.platform);
  const modelFiles = config.default_model_filename ? [config.default_model_filename] : (DEFAULT_FILES[backend] ?? []);
  for (const version of files.versions) {
    const versionPath = join(files.modelPath, String(version));
    for (const file of modelFiles) confine('default_model_filename', file, versionPath);
    for (const warmup of config.model_warmup) {
      for (const [name, input] of Object.entries(warmup.inputs)) {
        if (input.input_data_file !== undefined)
          confine(`model_warmup '${warmup.name}' input '${name}' input_data_file`, input.input_data_file, join(versionPath, WARMUP_DATA_FOLDER));
      }
    }
  }
  for (const output of config.output) {
    if (output.label_filename) confine(`output '${output.name}' label_filename`, output.label_filename, files.modelPath);
  }
  const env = config.parameters['EXECUTION_ENV_PATH']?.string_value;
  if (env) confine('EXECUTION_ENV_PATH', env, files.modelPath, expandExecutionEnvPath(env, files.modelPath));
}
