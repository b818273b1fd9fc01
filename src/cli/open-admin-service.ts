// What `herd keys|teams|audit` share: the key store named by --db (else herd.yaml's auth.db, else
// ./data/herd.db), the ledger from herd.yaml when there is one (for spend), and the AdminService over
// them acting as `cli@<hostname>` with the admin role: the same service the admin REST API uses.
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { loadHerdConfigFile } from '../config/load-herd-config.ts';
import { cliActor } from '../gateway/admin/admin-roles.ts';
import { AdminService } from '../gateway/admin/admin-service.ts';
import type { Ledger } from '../gateway/billing/ledger.ts';
import { openLedger, parseLedgerLocation } from '../gateway/billing/open-ledger.ts';
import { planBudgets } from '../gateway/billing/plan-budgets.ts';
import { resolveAuthSettings } from '../gateway/keys/auth-settings.ts';
import type { ChangeContext, KeyStore } from '../gateway/keys/key-store.ts';
import { openKeyStore, parseKeyStoreLocation } from '../gateway/keys/open-key-store.ts';
import { resolveCliLedger } from './usage-command.ts';

export interface AdminCliFlags {
  config?: string;
  db?: string;
}

/** Where output goes; tests capture it instead of the process streams. */
export interface AdminCliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: NodeJS.ProcessEnv;
  /** Wall clock, epoch ms (tests pin it). */
  now?: () => number;
  /** A failed check (audit verify) sets the exit code without throwing; default process.exitCode. */
  setExitCode?: (code: number) => void;
}

export const processIo: AdminCliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
};

export interface AdminCliSession {
  service: AdminService;
  store: KeyStore;
  ctx: ChangeContext;
  /** The store's location for messages (a path, or the PostgreSQL URL without credentials). */
  where: string;
  now: number;
}

/** The key store location: --db, else herd.yaml (--config or ./herd.yaml), else the default. */
export function resolveKeyStoreLocation(flags: AdminCliFlags, env: NodeJS.ProcessEnv): string {
  if (flags.db !== undefined) return flags.db;
  const file = configFileOf(flags);
  return resolveAuthSettings(file ? loadHerdConfigFile(file, env).config.auth : undefined).keyStore;
}

/** A SQLite key store's absolute path, or undefined for PostgreSQL. */
export function sqliteStorePath(flags: AdminCliFlags, env: NodeJS.ProcessEnv): string | undefined {
  const location = parseKeyStoreLocation(resolveKeyStoreLocation(flags, env));
  return location.kind === 'sqlite' ? resolve(location.path) : undefined;
}

/**
 * Opens the store (and the ledger, when herd.yaml names one that exists), runs `work`, closes both.
 * `mustExist`: a SQLite file that is not there is NOT_FOUND rather than created (reads and changes of
 * existing keys never create a database).
 */
export async function withAdminService<T>(flags: AdminCliFlags, io: AdminCliIo, mustExist: boolean, work: (session: AdminCliSession) => Promise<T>): Promise<T> {
  const location = resolveKeyStoreLocation(flags, io.env);
  const store = await openKeyStore(location, { mustExist });
  let ledger: Ledger | undefined;
  try {
    ledger = await openSpendLedger(flags, io.env);
    const now = (io.now ?? Date.now)();
    const service = new AdminService({ store, ledger, planBudgets, now: () => now });
    return await work({ service, store, ctx: { actor: cliActor(hostname()) }, where: store.location, now });
  } finally {
    await ledger?.close();
    await store.close();
  }
}

/** The ledger for the spend column: only from a herd.yaml that has one, and only if it already exists. */
async function openSpendLedger(flags: AdminCliFlags, env: NodeJS.ProcessEnv): Promise<Ledger | undefined> {
  if (configFileOf(flags) === undefined) return undefined;
  const { location, billing } = resolveCliLedger({ ...(flags.config !== undefined ? { config: flags.config } : {}) }, env);
  if (billing?.ledger === 'off' || location === 'off') return undefined;
  const parsed = parseLedgerLocation(location);
  if (parsed.kind === 'sqlite' && !existsSync(parsed.path)) return undefined;
  return openLedger(location);
}

function configFileOf(flags: AdminCliFlags): string | undefined {
  return flags.config ?? (existsSync('herd.yaml') ? 'herd.yaml' : undefined);
}
