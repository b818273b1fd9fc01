// The `auth` section of herd.yaml as the gateway uses it: which environment variable holds the
// master key, and where keys are stored. Defaults are documented in docs/configuration.md.
import { type AuthConfig, DEFAULT_KEY_STORE } from '../../config/gateway-config-schema.ts';
import { DEFAULT_AUTH_FAILURE_LIMIT, type AuthFailureLimitSettings } from './auth-failure-limiter.ts';

export interface AuthSettings {
  masterKeyEnv: string;
  /** auth.db: a file path, `sqlite:PATH` (relative to the working directory) or `postgres://…`. */
  keyStore: string;
  failureLimit: AuthFailureLimitSettings;
}

export const DEFAULT_MASTER_KEY_ENV = 'HERD_MASTER_KEY';
export { DEFAULT_KEY_STORE };

/** auth.db is resolved when herd.yaml loads (beside a PostgreSQL ledger by default); the file default is for callers without a config. */
export function resolveAuthSettings(auth: Partial<AuthConfig> | undefined): AuthSettings {
  const failed = auth?.failed_keys;
  return {
    masterKeyEnv: auth?.master_key_env ?? DEFAULT_MASTER_KEY_ENV,
    keyStore: auth?.db ?? DEFAULT_KEY_STORE,
    failureLimit: failed ? { maxFailures: failed.max_per_address, windowMs: failed.window_s * 1000 } : DEFAULT_AUTH_FAILURE_LIMIT,
  };
}

/**
 * The master key's value, or undefined when the variable is unset or blank. Surrounding whitespace
 * is dropped because HTTP strips it from header values, so such a key could never match.
 */
export function readMasterKey(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

/** What the app prints when the gateway runs without authentication. */
export function formatOpenGatewayWarning(settings: AuthSettings): string {
  return (
    `no gateway keys exist and ${settings.masterKeyEnv} is not set: the OpenAI-compatible gateway accepts requests without a key, from 127.0.0.1 only. ` +
    `Create a key with \`herd keys create --name NAME\` or set ${settings.masterKeyEnv} to require one.`
  );
}
