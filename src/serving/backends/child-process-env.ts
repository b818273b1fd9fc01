// The environment of every process serving starts (the Python stub today): an allow-list, never Herd's own
// environment, which holds provider keys, the master key and database URLs. A model names what else it needs.
import { HerdError } from '../../core/errors.ts';
import type { ModelConfig } from '../model-config/model-config.ts';

/** The model config parameter that names further variables to pass, comma- or space-separated. */
export const CHILD_ENV_PARAMETER = 'HERD_CHILD_ENV';

/** What every child gets from Herd's environment when set: the search path, home, locale, time zone, Python's and Triton's own. */
const ALLOWED_NAMES = new Set(['PATH', 'HOME', 'LANG', 'LANGUAGE', 'TZ']);
const ALLOWED_PREFIXES = ['LC_', 'PYTHON', 'TRITON_'];

/** Never passed, even when a config names them: Herd's own settings and the usual homes of its secrets. */
const PROTECTED_NAMES = new Set(['DATABASE_URL', 'REDIS_URL']);
const PROTECTED_PATTERN = /^HERD_|_API_KEY$/;

export interface ChildEnvPolicy {
  /** Further names that hold secrets (the configured provider key, master key and password variables). */
  protectedNames?: readonly string[];
}

/** The variables a model's config names for its processes (CHILD_ENV_PARAMETER); refuses a protected one (INVALID_ARG). */
export function readChildEnvNames(config: ModelConfig, policy: ChildEnvPolicy = {}): string[] {
  const raw = config.parameters[CHILD_ENV_PARAMETER]?.string_value ?? '';
  const names = raw.split(/[\s,]+/).filter((n) => n !== '');
  const extra = new Set(policy.protectedNames ?? []);
  for (const name of names) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      throw new HerdError('INVALID_ARG', `model '${config.name}': parameter ${CHILD_ENV_PARAMETER} names '${name}', which is not an environment variable name`, {
        param: CHILD_ENV_PARAMETER,
      });
    }
    if (PROTECTED_NAMES.has(name) || PROTECTED_PATTERN.test(name) || extra.has(name)) {
      throw new HerdError(
        'INVALID_ARG',
        `model '${config.name}': parameter ${CHILD_ENV_PARAMETER} names ${name}, which holds one of Herd's secrets or settings and is never passed to a model's process`,
        { param: CHILD_ENV_PARAMETER },
      );
    }
  }
  return names;
}

/** The allow-listed part of `parent`, plus the named variables that are set; `overrides` last. */
export function createChildProcessEnv(parent: NodeJS.ProcessEnv, named: readonly string[], overrides: Readonly<Record<string, string>> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value === undefined) continue;
    if (ALLOWED_NAMES.has(name) || ALLOWED_PREFIXES.some((p) => name.startsWith(p))) env[name] = value;
  }
  for (const name of named) {
    const value = parent[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...overrides };
}
