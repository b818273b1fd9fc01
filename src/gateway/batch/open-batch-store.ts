// Opens the batch store where the ledger is (billing.ledger): a second connection to the SQLite file, or a pool on
// the PostgreSQL database, migrated under its own scope; and says where uploaded files go by default.
import { dirname, join, resolve } from 'node:path';
import { parseLedgerLocation } from '../billing/open-ledger.ts';
import { PostgresDriver } from '../storage/postgres-driver.ts';
import { SqliteDriver } from '../storage/sqlite-driver.ts';
import { BATCH_STORE_SCOPE, batchStoreMigrations, postgresBatchStoreMigrations } from './batch-store-migrations.ts';
import { SqlBatchStore } from './sql-batch-store.ts';

/** Batch files beside a PostgreSQL ledger when batch.files.dir is unset (relative to the working directory). */
export const DEFAULT_POSTGRES_BATCH_FILES = 'data/files';

export interface OpenBatchStoreOptions {
  /** PostgreSQL: tables in this schema (created if needed); tests use one each. */
  schema?: string;
  /** PostgreSQL: connections in the pool (default 4). */
  poolSize?: number;
}

export async function openBatchStore(ledgerLocation: string, options: OpenBatchStoreOptions = {}): Promise<SqlBatchStore> {
  const parsed = parseLedgerLocation(ledgerLocation);
  if (parsed.kind === 'sqlite') {
    const driver = SqliteDriver.open(parsed.path, { label: 'batch store', migrations: { scope: BATCH_STORE_SCOPE, list: batchStoreMigrations } });
    return new SqlBatchStore(driver);
  }
  const driver = await PostgresDriver.open({
    url: parsed.url,
    ...(options.schema !== undefined ? { schema: options.schema } : {}),
    poolSize: options.poolSize ?? 4,
    label: 'batch store',
    param: 'billing.ledger',
    migrations: { scope: BATCH_STORE_SCOPE, list: postgresBatchStoreMigrations },
  });
  return new SqlBatchStore(driver);
}

/** batch.files.dir, else files/ beside a SQLite ledger, else data/files in the working directory. */
export function defaultBatchFilesDir(ledgerLocation: string): string {
  const parsed = parseLedgerLocation(ledgerLocation);
  return parsed.kind === 'sqlite' ? join(dirname(resolve(parsed.path)), 'files') : resolve(DEFAULT_POSTGRES_BATCH_FILES);
}
