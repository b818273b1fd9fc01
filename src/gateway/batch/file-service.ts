// OpenAI's Files API for batch input, one method per verb (the HTTP routes are its thin transport): bytes streamed
// to the file store while counted, the row in the batch store, and every answer in OpenAI's File object shape.
import type { Readable } from 'node:stream';
import { HerdError } from '../../core/errors.ts';
import type { KeyInfo } from '../keys/key-store.ts';
import { createFileId } from './batch-ids.ts';
import type { BatchFile, BatchFilePurpose, BatchStore, ListOrder } from './batch-store.ts';
import type { FileStore, PutLimits, StoredBytes } from './file-store.ts';

/** OpenAI's File object. */
export interface FileObject {
  id: string;
  object: 'file';
  bytes: number;
  /** Unix seconds. */
  created_at: number;
  filename: string;
  purpose: 'batch' | 'batch_output';
  status: 'processed';
  expires_at?: number;
  status_details: null;
}

export interface FileList {
  object: 'list';
  data: FileObject[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

/** The multipart form's text fields, as sent. */
export type UploadFields = ReadonlyMap<string, string>;

/** GET /v1/files' query, as sent (strings). */
export interface ListFilesQuery {
  purpose?: string | undefined;
  limit?: string | undefined;
  after?: string | undefined;
  order?: string | undefined;
}

export interface FileServiceOptions {
  store: BatchStore;
  files: FileStore;
  maxBytes: number;
  maxLines: number;
  /** A file's lifetime when the upload sets no expires_after. */
  ttlMs: number;
  now?: () => number;
}

/** OpenAI's bounds for expires_after.seconds (1 hour to 30 days). */
const EXPIRES_AFTER_SECONDS = { min: 3600, max: 2_592_000 };
/** OpenAI's list limit: 1 to 10,000, default 10,000. */
const LIST_LIMIT = { max: 10_000, default: 10_000 };
const MASTER_KEY_ID = 'master';

export class FileService {
  private readonly now: () => number;

  constructor(private readonly options: FileServiceOptions) {
    this.now = options.now ?? Date.now;
  }

  get limits(): PutLimits {
    return { maxBytes: this.options.maxBytes, maxLines: this.options.maxLines };
  }

  /** A purpose sent before the file is refused before its bytes are read. */
  checkPurpose(purpose: string | undefined): void {
    if (purpose === undefined) throw new HerdError('INVALID_ARG', "'purpose' is a required property", { param: 'purpose' });
    if (purpose !== 'batch') {
      throw new HerdError('INVALID_ARG', `'${purpose.slice(0, 64)}' is not one of ['batch'] - 'purpose' (Herd stores files for the Batch API only)`, { param: 'purpose' });
    }
  }

  /** Streams the file part's bytes into the file store, counted and bounded; the caller registers or discards them. */
  storeBytes(source: AsyncIterable<Buffer | Uint8Array>): Promise<StoredBytes> {
    return this.options.files.put(source, this.limits);
  }

  async discard(stored: StoredBytes): Promise<void> {
    await this.options.files.delete(stored.ref);
  }

  /** POST /v1/files once the form is read: the fields checked, the row written; stored bytes are discarded on refusal. */
  async register(owner: KeyInfo, stored: StoredBytes | undefined, filename: string | undefined, fields: UploadFields): Promise<FileObject> {
    try {
      this.checkPurpose(fields.get('purpose'));
      if (stored === undefined) throw new HerdError('INVALID_ARG', "'file' is a required property", { param: 'file' });
      const createdAt = this.now();
      const file: BatchFile = {
        id: createFileId(),
        keyId: owner.id,
        purpose: 'batch',
        filename: cleanFilename(filename),
        bytes: stored.bytes,
        lines: stored.lines,
        createdAt,
        expiresAt: createdAt + this.lifetimeMs(fields),
        deletedAt: undefined,
        storageRef: stored.ref,
      };
      await this.options.store.insertFile(file);
      return toFileObject(file);
    } catch (err) {
      if (stored !== undefined) await this.discard(stored).catch(() => undefined);
      throw err;
    }
  }

  async retrieve(owner: KeyInfo, id: string): Promise<FileObject> {
    return toFileObject(await this.visible(owner, id));
  }

  async list(owner: KeyInfo, query: ListFilesQuery): Promise<FileList> {
    const page = await this.options.store.listFiles({
      keyId: owner.id === MASTER_KEY_ID ? undefined : owner.id,
      purpose: parsePurposeFilter(query.purpose),
      after: query.after === undefined || query.after === '' ? undefined : query.after,
      limit: parseLimit(query.limit),
      order: parseOrder(query.order),
      now: this.now(),
    });
    const data = page.items.map(toFileObject);
    return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: page.hasMore };
  }

  async content(owner: KeyInfo, id: string): Promise<{ file: FileObject; stream: Readable }> {
    const file = await this.visible(owner, id);
    return { file: toFileObject(file), stream: await this.options.files.open(file.storageRef) };
  }

  /** The row is marked deleted first (the id is gone for clients at once), then the bytes are removed. */
  async delete(owner: KeyInfo, id: string): Promise<{ id: string; object: 'file'; deleted: true }> {
    const file = await this.visible(owner, id);
    if (!(await this.options.store.markFileDeleted(file.id, this.now()))) throw unknownFile(id);
    await this.options.files.delete(file.storageRef);
    return { id: file.id, object: 'file', deleted: true };
  }

  /** A batch's input: a file the key may see, uploaded for the Batch API. */
  async inputFile(owner: KeyInfo, id: string): Promise<BatchFile> {
    const file = await this.visible(owner, id).catch(() => {
      throw new HerdError('NOT_FOUND', `No such File object: ${id.slice(0, 128)}`, { param: 'input_file_id', reason: 'unknown_object' });
    });
    if (file.purpose !== 'batch') throw new HerdError('INVALID_ARG', `File ${file.id} has purpose '${file.purpose}', not 'batch'`, { param: 'input_file_id' });
    return file;
  }

  /**
   * A Message Batch's body, streamed into the file store under Anthropic's limits and registered as the batch's
   * input (kept for the worker to read lines back; removed with the batch).
   */
  async storeInline(owner: KeyInfo, body: AsyncIterable<Buffer | Uint8Array>, limits: PutLimits): Promise<BatchFile> {
    return this.storeOwn(owner.id, 'batch', 'message-batch.json', await this.options.files.put(body, limits));
  }

  /** A finished batch's output or error file, owned by the batch's key (its lines streamed in, never held whole). */
  async storeOutput(keyId: string, filename: string, lines: AsyncIterable<Buffer>): Promise<BatchFile> {
    const stored = await this.options.files.put(lines, { maxBytes: Number.MAX_SAFE_INTEGER, maxLines: Number.MAX_SAFE_INTEGER });
    return this.storeOwn(keyId, 'batch_output', filename, stored);
  }

  /** Registers bytes Herd stored itself (the configured lifetime); they are discarded if the row cannot be written. */
  private async storeOwn(keyId: string, purpose: BatchFilePurpose, filename: string, stored: StoredBytes): Promise<BatchFile> {
    const createdAt = this.now();
    const file: BatchFile = {
      id: createFileId(),
      keyId,
      purpose,
      filename,
      bytes: stored.bytes,
      lines: stored.lines,
      createdAt,
      expiresAt: createdAt + this.options.ttlMs,
      deletedAt: undefined,
      storageRef: stored.ref,
    };
    try {
      await this.options.store.insertFile(file);
    } catch (err) {
      await this.discard(stored).catch(() => undefined);
      throw err;
    }
    return file;
  }

  /** Herd's own removal of a file (a refused or deleted batch's input), whoever owns it. */
  async removeInternal(id: string): Promise<void> {
    const file = await this.options.store.getFile(id);
    if (file === undefined) return;
    await this.options.store.markFileDeleted(id, this.now());
    await this.options.files.delete(file.storageRef).catch(() => undefined);
  }

  /** A file the key may see: its own (the master key: any), not deleted, not expired; else the same 404 as an unknown id. */
  private async visible(owner: KeyInfo, id: string): Promise<BatchFile> {
    const file = await this.options.store.getFile(id);
    const mine = file !== undefined && (owner.id === MASTER_KEY_ID || file.keyId === owner.id);
    if (!mine || file.deletedAt !== undefined || (file.expiresAt !== undefined && file.expiresAt <= this.now())) throw unknownFile(id);
    return file;
  }

  /** expires_after[anchor] and expires_after[seconds], as the SDKs send them; else the configured lifetime. */
  private lifetimeMs(fields: UploadFields): number {
    const anchor = fields.get('expires_after[anchor]');
    const seconds = fields.get('expires_after[seconds]');
    if (anchor === undefined && seconds === undefined) return this.options.ttlMs;
    if (anchor !== 'created_at') throw new HerdError('INVALID_ARG', "'expires_after.anchor' must be 'created_at'", { param: 'expires_after.anchor' });
    const n = Number(seconds);
    if (!Number.isInteger(n) || n < EXPIRES_AFTER_SECONDS.min || n > EXPIRES_AFTER_SECONDS.max) {
      throw new HerdError('INVALID_ARG', `'expires_after.seconds' must be an integer from ${EXPIRES_AFTER_SECONDS.min} to ${EXPIRES_AFTER_SECONDS.max}`, {
        param: 'expires_after.seconds',
      });
    }
    return n * 1000;
  }
}

export function toFileObject(file: BatchFile): FileObject {
  return {
    id: file.id,
    object: 'file',
    bytes: file.bytes,
    created_at: Math.floor(file.createdAt / 1000),
    filename: file.filename,
    purpose: file.purpose,
    status: 'processed',
    ...(file.expiresAt !== undefined ? { expires_at: Math.floor(file.expiresAt / 1000) } : {}),
    status_details: null,
  };
}

export function unknownFile(id: string): HerdError {
  return new HerdError('NOT_FOUND', `No such File object: ${id.slice(0, 128)}`, { param: 'id', reason: 'unknown_object' });
}

/** The name as the client sent it, without a path and control characters, bounded. */
function cleanFilename(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  const clean = [...base].filter((ch) => ch >= ' ' && ch !== '\u007f').join('');
  return clean.slice(0, 255) || 'upload.jsonl';
}

function parsePurposeFilter(purpose: string | undefined): 'batch' | 'batch_output' | undefined {
  if (purpose === undefined || purpose === '') return undefined;
  if (purpose === 'batch' || purpose === 'batch_output') return purpose;
  throw new HerdError('INVALID_ARG', `'${purpose.slice(0, 64)}' is not one of ['batch', 'batch_output'] - 'purpose'`, { param: 'purpose' });
}

function parseLimit(limit: string | undefined): number {
  if (limit === undefined || limit === '') return LIST_LIMIT.default;
  const n = Number(limit);
  if (!Number.isInteger(n) || n < 1 || n > LIST_LIMIT.max) throw new HerdError('INVALID_ARG', `'limit' must be an integer from 1 to ${LIST_LIMIT.max}`, { param: 'limit' });
  return n;
}

function parseOrder(order: string | undefined): ListOrder {
  if (order === undefined || order === '' || order === 'desc') return 'desc';
  if (order === 'asc') return 'asc';
  throw new HerdError('INVALID_ARG', `'${order.slice(0, 16)}' is not one of ['asc', 'desc'] - 'order'`, { param: 'order' });
}
