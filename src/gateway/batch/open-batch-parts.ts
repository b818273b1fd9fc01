// The batch half's parts as `herd serve` opens them: the store in the ledger's database, the file folder, and the
// Files API's service; nothing when batch work is off (no ledger, or batch.enabled: false).
import { isBatchEnabled } from '../../config/batch-config-schema.ts';
import type { HerdConfig } from '../../config/herd-config-schema.ts';
import type { BatchStore } from './batch-store.ts';
import { DirectoryFileStore } from './directory-file-store.ts';
import { FileService } from './file-service.ts';
import type { FileStore } from './file-store.ts';
import { defaultBatchFilesDir, type OpenBatchStoreOptions, openBatchStore } from './open-batch-store.ts';

export interface BatchParts {
  store: BatchStore;
  fileStore: FileStore;
  files: FileService;
}

export async function openBatchParts(config: Pick<HerdConfig, 'batch' | 'billing'>, options: OpenBatchStoreOptions = {}): Promise<BatchParts | undefined> {
  if (!isBatchEnabled(config)) return undefined;
  const store = await openBatchStore(config.billing.ledger, options);
  const fileStore = new DirectoryFileStore(config.batch.files.dir ?? defaultBatchFilesDir(config.billing.ledger));
  const files = new FileService({
    store,
    files: fileStore,
    maxBytes: config.batch.files.max_bytes,
    maxLines: config.batch.max_lines,
    ttlMs: config.batch.files.ttl_days * 86_400_000,
  });
  return { store, fileStore, files };
}
