// Batch files' bytes as chunks in the ledger's database (batch.files.store: database), on either engine: the blob row
// is begun, chunks written one statement each (no transaction spans the upload), and the row marked complete last.
import type { SqlDriver } from '../storage/sql-driver.ts';
import type { FileBlob, FileBlobStore } from './batch-store.ts';

type BlobRow = { ref: string; bytes: number | string; chunk_bytes: number | string; complete: number | string; created_at: number | string };

export class SqlFileBlobs implements FileBlobStore {
  constructor(private readonly db: SqlDriver) {}

  async begin(ref: string, chunkBytes: number, createdAt: number): Promise<void> {
    await this.db.query('INSERT INTO batch_file_blobs (ref, chunk_bytes, created_at) VALUES (?, ?, ?)', [ref, chunkBytes, createdAt]);
  }

  async putChunk(ref: string, seq: number, data: Buffer): Promise<void> {
    await this.db.query('INSERT INTO batch_file_chunks (ref, seq, data) VALUES (?, ?, ?)', [ref, seq, data]);
  }

  async complete(ref: string, bytes: number): Promise<void> {
    await this.db.query('UPDATE batch_file_blobs SET bytes = ?, complete = 1 WHERE ref = ?', [bytes, ref]);
  }

  async get(ref: string): Promise<FileBlob | undefined> {
    const [row] = await this.db.query<BlobRow>('SELECT ref, bytes, chunk_bytes, complete, created_at FROM batch_file_blobs WHERE ref = ?', [ref]);
    if (row === undefined) return undefined;
    return { ref: row.ref, bytes: Number(row.bytes), chunkBytes: Number(row.chunk_bytes), complete: Number(row.complete) === 1, createdAt: Number(row.created_at) };
  }

  async chunks(ref: string, fromSeq: number, toSeq: number): Promise<Buffer[]> {
    const rows = await this.db.query<{ data: Uint8Array }>('SELECT data FROM batch_file_chunks WHERE ref = ? AND seq >= ? AND seq <= ? ORDER BY seq', [ref, fromSeq, toSeq]);
    return rows.map((r) => (Buffer.isBuffer(r.data) ? r.data : Buffer.from(r.data)));
  }

  async delete(ref: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.query('DELETE FROM batch_file_chunks WHERE ref = ?', [ref]);
      await tx.query('DELETE FROM batch_file_blobs WHERE ref = ?', [ref]);
    });
  }

  async listIncomplete(before: number): Promise<string[]> {
    const rows = await this.db.query<{ ref: string }>('SELECT ref FROM batch_file_blobs WHERE complete = 0 AND created_at < ?', [before]);
    return rows.map((r) => r.ref);
  }
}
