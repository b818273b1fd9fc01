// ${VAR} and ${VAR:-default} in herd.yaml string values, resolved from the environment at load. A value
// taken from the environment may be a secret: errors name the variable, never print what it holds.
import { HerdError } from '../core/errors.ts';

const PATTERN = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Values shorter than this are redacted only in errors about the field they were written into. */
const MIN_REDACTED_ANYWHERE = 4;

/** Environment values substituted into a config: value → the variable's name. */
export type Substitutions = Map<string, string>;

/** Every value this process substituted from the environment, for the CLI's last-resort redaction. */
const substitutedInProcess: Substitutions = new Map();

export function interpolateEnv(value: string, env: NodeJS.ProcessEnv, where: string, substitutions?: Substitutions): string {
  return value.replace(PATTERN, (_match, name: string, fallback: string | undefined) => {
    const found = env[name];
    if (found !== undefined && found !== '') {
      substitutions?.set(found, name);
      substitutedInProcess.set(found, name);
      return found;
    }
    if (fallback !== undefined) return fallback;
    throw new HerdError('INVALID_ARG', `${where}: environment variable ${name} is not set (write \${${name}:-default} to give a default)`);
  });
}

/**
 * `text` with every substituted value replaced by `(the value of $NAME)`, longest first so a value inside
 * another is not half-replaced. `everywhere` false limits it to values long enough to be found by accident.
 */
export function redactSubstitutions(text: string, substitutions: Substitutions, everywhere = false): string {
  let out = text;
  const values = [...substitutions.keys()].filter((v) => everywhere || v.length >= MIN_REDACTED_ANYWHERE).sort((a, b) => b.length - a.length);
  for (const value of values) out = out.split(value).join(`(the value of $${substitutions.get(value)})`);
  return out;
}

/** Any message a command prints: values this process took from the environment for a config never appear. */
export function redactEnvValues(text: string): string {
  return redactSubstitutions(text, substitutedInProcess);
}
