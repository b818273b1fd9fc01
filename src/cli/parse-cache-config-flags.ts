// tritonserver's --cache-config <cache_name>,<setting>=<value> (repeatable, one setting per flag) into
// herd.yaml's serving.cache, checked by the same schema as the file so both give the same errors.
import type { ServingCacheConfig } from '../config/serving-cache-config-schema.ts';
import { servingCacheSchema } from '../config/serving-cache-config-schema.ts';
import { HerdError } from '../core/errors.ts';

const NUMERIC = new Set(['size', 'port', 'db', 'connect_timeout', 'socket_timeout']);
const SETTINGS: Record<string, readonly string[]> = {
  local: ['size'],
  redis: ['host', 'port', 'user', 'username', 'password_env', 'db', 'connect_timeout', 'socket_timeout', 'tls_enabled', 'key_prefix'],
};
const BOOLEAN = new Set(['tls_enabled']);

export function parseCacheConfigFlags(flags: readonly string[]): ServingCacheConfig {
  const caches: Record<string, Record<string, unknown>> = {};
  for (const flag of flags) {
    const comma = flag.indexOf(',');
    if (comma <= 0) throw new HerdError('INVALID_ARG', `No cache specified. --cache-config option format is <cache name>,<setting>=<value>. Got ${flag}`);
    const equals = flag.indexOf('=', comma + 1);
    const name = flag.slice(0, comma);
    const setting = equals < 0 ? '' : flag.slice(comma + 1, equals);
    const value = equals < 0 ? '' : flag.slice(equals + 1);
    if (!setting || !value) throw new HerdError('INVALID_ARG', `--cache-config option format is '<cache name>,<setting>=<value>'. Got ${flag}`);
    if (name !== 'local' && name !== 'redis') throw new HerdError('INVALID_ARG', `--cache-config: unknown cache '${name}' (Herd has 'local' and 'redis')`);
    if (setting !== 'password' && !SETTINGS[name]?.includes(setting)) {
      throw new HerdError('INVALID_ARG', `--cache-config: '${name}' has no setting '${setting}' (known: ${SETTINGS[name]?.join(', ')})`);
    }
    if (setting === 'password') {
      throw new HerdError(
        'INVALID_ARG',
        '--cache-config redis,password=... would put a secret on the command line: set an environment variable and pass its name with --cache-config redis,password_env=NAME',
      );
    }
    const settings = (caches[name] ??= {});
    settings[setting === 'username' ? 'user' : setting] = convertValue(flag, setting, value);
  }
  const parsed = servingCacheSchema.safeParse(caches);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? ` (${issue.path.join('.')})` : '';
    throw new HerdError('INVALID_ARG', `--cache-config: ${issue?.message ?? 'invalid'}${where}`);
  }
  return parsed.data;
}

function convertValue(flag: string, setting: string, value: string): unknown {
  if (NUMERIC.has(setting)) {
    const n = Number(value);
    if (!Number.isInteger(n)) throw new HerdError('INVALID_ARG', `--cache-config: ${setting} must be an integer, got '${value}' in ${flag}`);
    return n;
  }
  if (BOOLEAN.has(setting)) {
    if (value !== 'true' && value !== 'false') throw new HerdError('INVALID_ARG', `--cache-config: ${setting} must be true or false, got '${value}' in ${flag}`);
    return value === 'true';
  }
  return value;
}
