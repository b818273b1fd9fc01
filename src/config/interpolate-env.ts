// ${VAR} and ${VAR:-default} in herd.yaml string values, resolved from the environment at load.
import { HerdError } from '../core/errors.ts';

const PATTERN = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export function interpolateEnv(value: string, env: NodeJS.ProcessEnv, where: string): string {
  return value.replace(PATTERN, (_match, name: string, fallback: string | undefined) => {
    const found = env[name];
    if (found !== undefined && found !== '') return found;
    if (fallback !== undefined) return fallback;
    throw new HerdError('INVALID_ARG', `${where}: environment variable ${name} is not set (write \${${name}:-default} to give a default)`);
  });
}
