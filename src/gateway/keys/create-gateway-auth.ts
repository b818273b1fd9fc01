// One call for the composition root: opens the key store named by herd.yaml's `auth` section (by default
// beside a PostgreSQL ledger, else the SQLite file), reads the master key from its environment variable,
// and builds the Authenticator and the console's session store (a table beside the keys).
import type { AuthConfig } from '../../config/gateway-config-schema.ts';
import { formatOpenGatewayWarning, readMasterKey, resolveAuthSettings, type AuthSettings } from './auth-settings.ts';
import { Authenticator } from './authenticator.ts';
import { ConsoleSessionStore } from './console-sessions.ts';
import type { KeyStore } from './key-store.ts';
import { openKeyStore } from './open-key-store.ts';
import type { OpenKeyStoreOptions } from './open-key-store.ts';

export interface GatewayAuth {
  authenticator: Authenticator;
  store: KeyStore;
  settings: AuthSettings;
  /** Console sign-in sessions, in the key store's database. */
  sessions: ConsoleSessionStore;
  /** Set when the gateway starts without authentication; the app prints it. */
  openWarning: string | undefined;
  close(): Promise<void>;
}

export async function createGatewayAuth(auth: Partial<AuthConfig> | undefined, env: NodeJS.ProcessEnv = process.env, options: OpenKeyStoreOptions = {}): Promise<GatewayAuth> {
  const settings = resolveAuthSettings(auth);
  const store = await openKeyStore(settings.keyStore, options);
  try {
    const authenticator = new Authenticator({
      store,
      masterKey: readMasterKey(env, settings.masterKeyEnv),
      masterKeyEnv: settings.masterKeyEnv,
      failureLimit: settings.failureLimit,
    });
    const openWarning = authenticator.isOpen() ? formatOpenGatewayWarning(settings) : undefined;
    const sessions = new ConsoleSessionStore(store.driver);
    return { authenticator, store, settings, sessions, openWarning, close: () => store.close() };
  } catch (err) {
    await store.close();
    throw err;
  }
}
