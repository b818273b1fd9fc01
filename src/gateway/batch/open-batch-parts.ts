// The batch half's parts as `herd serve` opens them: the store in the ledger's database, the file folder, and the
// Files API's service; nothing when batch work is off (no ledger, or batch.enabled: false).
import { isBatchEnabled } from '../../config/batch-config-schema.ts';
import type { HerdConfig } from '../../config/herd-config-schema.ts';
import type { BatchStore } from './batch-store.ts';
import { DatabaseFileStore } from './database-file-store.ts';
import { DirectoryFileStore } from './directory-file-store.ts';
import { FileService } from './file-service.ts';
import type { FileStore } from './file-store.ts';
import { parseLedgerLocation } from '../billing/open-ledger.ts';
import { DeferredBatchStore } from './deferred-batch-store.ts';
import { defaultBatchFilesDir, type OpenBatchStoreOptions, openBatchStore } from './open-batch-store.ts';

export interface BatchParts {
  store: BatchStore;
  fileStore: FileStore;
  files: FileService;
}

export async function openBatchParts(
  config: Pick<HerdConfig, 'batch' | 'billing'>,
  options: OpenBatchStoreOptions & { log?: (line: string) => void } = {},
): Promise<BatchParts | undefined> {
  if (!isBatchEnabled(config)) return undefined;
  const store = await openStore(config.billing.ledger, options);
  const fileStore: FileStore =
    config.batch.files.store === 'database' ? new DatabaseFileStore(store.blobs) : new DirectoryFileStore(config.batch.files.dir ?? defaultBatchFilesDir(config.billing.ledger));
  const files = new FileService({
    store,
    files: fileStore,
    maxBytes: config.batch.files.max_bytes,
    maxLines: config.batch.max_lines,
    ttlMs: config.batch.files.ttl_days * 86_400_000,
  });
  return { store, fileStore, files };
}

/**
 * SQLite opens at once; PostgreSQL is not waited for (the ledger serves with its database down, so the batch
 * store must not be what stops the server starting): it connects in the background and answers UNAVAILABLE until then.
 */
async function openStore(ledger: string, options: OpenBatchStoreOptions & { log?: (line: string) => void }): Promise<BatchStore> {
  const parsed = parseLedgerLocation(ledger);
  if (parsed.kind === 'sqlite') return openBatchStore(ledger, options);
  const { log, ...storeOptions } = options;
  const label = `batch store ${redactUrl(parsed.url)}`;
  const store = new DeferredBatchStore({ open: () => openBatchStore(ledger, storeOptions), label, ...(log ? { log } : {}) });
  await store.start();
  return store;
}

/** The URL without its password, for messages. */
function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    return parsed.toString();
  } catch {
    return 'postgres://…';
  }
}
