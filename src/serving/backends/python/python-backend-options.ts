// The python backend's settings from Triton's `--backend-config=python,<key>=<value>` (or herd.yaml's
// serving.backend_config.python), and the interpreter one model uses (its EXECUTION_ENV_PATH parameter).
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { HerdError } from '../../../core/errors.ts';
import type { ModelConfig } from '../../model-config/model-config.ts';

export interface PythonBackendSettings {
  /** Interpreter for every model that names none of its own; `python3` on PATH by default. */
  executable: string;
  /** How long initialize / auto_complete_config / finalize may take (Triton's stub-timeout-seconds). */
  stubTimeoutSeconds: number;
  /**
   * Size of each instance's shared-memory segment, where tensors of 64 KiB and more cross (half each way;
   * sparse, so memory only as used). Unlike Triton's, it does not grow: what does not fit takes the pipe.
   */
  shmDefaultByteSize: number;
  /** Accepted for Triton command-line compatibility; the segment does not grow. */
  shmGrowthByteSize: number;
  /** Herd's own: how long a stub polls for the next message after it answered, before it sleeps (0: never polls). */
  stubPollMicroseconds: number;
}

export const DEFAULT_PYTHON_SETTINGS: PythonBackendSettings = {
  executable: 'python3',
  stubTimeoutSeconds: 30,
  shmDefaultByteSize: 64 << 20,
  shmGrowthByteSize: 1 << 20,
  stubPollMicroseconds: 0,
};

/** Triton's python backend keys Herd accepts without using (shared memory is not its transport). */
const ACCEPTED_UNUSED = new Set(['shm-region-prefix-name', 'shm-message-queue-size', 'default-max-batch-size']);

/** Reads the python entry of the backend config; `warn` hears about keys that change nothing. */
export function parsePythonBackendSettings(values: Readonly<Record<string, string>>, warn: (line: string) => void): PythonBackendSettings {
  const settings = { ...DEFAULT_PYTHON_SETTINGS };
  for (const [key, value] of Object.entries(values)) {
    switch (key) {
      case 'python-executable':
        if (!value) throw new HerdError('INVALID_ARG', 'backend config python,python-executable must not be empty');
        settings.executable = value;
        break;
      case 'stub-timeout-seconds':
        settings.stubTimeoutSeconds = parsePositive(key, value);
        break;
      case 'shm-default-byte-size':
        settings.shmDefaultByteSize = parsePositive(key, value);
        break;
      case 'shm-growth-byte-size':
        settings.shmGrowthByteSize = parsePositive(key, value);
        break;
      case 'stub-poll-microseconds':
        settings.stubPollMicroseconds = value === '0' ? 0 : parsePositive(key, value);
        break;
      default:
        if (!ACCEPTED_UNUSED.has(key)) warn(`backend config python,${key}: unknown to Herd's python backend, ignored`);
    }
  }
  return settings;
}

function parsePositive(key: string, value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0) throw new HerdError('INVALID_ARG', `backend config python,${key} must be a positive integer, got '${value}'`);
  return n;
}

/**
 * The interpreter for one model: its EXECUTION_ENV_PATH parameter when set (Triton's per-model
 * environment; `$$TRITON_MODEL_DIRECTORY` is the model's folder), else the backend's. Herd takes an
 * unpacked environment (a directory with bin/python3, e.g. a venv or an extracted conda-pack) or the
 * interpreter's path; a packed .tar.gz is refused with a message saying to unpack it.
 */
export function resolvePythonExecutable(config: ModelConfig, modelPath: string, settings: PythonBackendSettings): string {
  const raw = config.parameters['EXECUTION_ENV_PATH']?.string_value;
  if (!raw) return settings.executable;
  const path = expandExecutionEnvPath(raw, modelPath);
  // Messages quote the config's value: the expanded path would show where the repository lives.
  if (/\.(tar\.gz|tgz)$/.test(path)) {
    throw new HerdError(
      'UNSUPPORTED',
      `model '${config.name}': EXECUTION_ENV_PATH '${raw}' is a packed environment; unpack it (tar -xzf) and point EXECUTION_ENV_PATH at the folder`,
    );
  }
  if (!existsSync(path)) throw new HerdError('INVALID_ARG', `model '${config.name}': EXECUTION_ENV_PATH '${raw}' does not exist`);
  if (statSync(path).isDirectory()) {
    for (const name of ['bin/python3', 'bin/python']) {
      const candidate = join(path, name);
      if (existsSync(candidate)) return candidate;
    }
    throw new HerdError('INVALID_ARG', `model '${config.name}': EXECUTION_ENV_PATH '${raw}' has no bin/python3`);
  }
  return path;
}

/** EXECUTION_ENV_PATH as a path: `$$TRITON_MODEL_DIRECTORY` is the model's folder, and a relative path starts there too. */
export function expandExecutionEnvPath(value: string, modelPath: string): string {
  return resolve(modelPath, value.replaceAll('$$TRITON_MODEL_DIRECTORY', modelPath));
}
