// The FileStore in the ledger's database (batch.files.store: database): replicas without a shared folder read each
// other's uploads. Bytes go in 1 MiB chunks as they stream in (one chunk in memory), and a file becomes readable
// only when its blob is marked complete, so a crash mid-upload leaves nothing a ref points at (swept a day later).
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { HerdError } from '../../core/errors.ts';
import type { FileBlobStore } from './batch-store.ts';
import { type ByteRange, type FileStore, LineCounter, type PutLimits, type StoredBytes } from './file-store.ts';

const CHUNK_BYTES = 1 << 20;
/** Chunks read per query while a file streams out. */
const CHUNKS_PER_READ = 4;
/** An incomplete blob older than this was cut off by a crash (a replica may still be writing a younger one). */
const STALE_INCOMPLETE_MS = 24 * 3600_000;

export class DatabaseFileStore implements FileStore {
  private swept = false;

  constructor(
    private readonly blobs: FileBlobStore,
    private readonly now: () => number = Date.now,
  ) {}

  async put(source: AsyncIterable<Buffer | Uint8Array>, limits: PutLimits): Promise<StoredBytes> {
    await this.sweepOnce();
    const ref = randomBytes(16).toString('hex');
    const counter = new LineCounter(limits);
    await this.blobs.begin(ref, CHUNK_BYTES, this.now());
    try {
      let seq = 0;
      let pending: Buffer[] = [];
      let size = 0;
      const flush = async (all: boolean) => {
        let joined = Buffer.concat(pending, size);
        while (joined.length >= CHUNK_BYTES || (all && joined.length > 0)) {
          await this.blobs.putChunk(ref, seq++, joined.subarray(0, CHUNK_BYTES));
          joined = joined.subarray(Math.min(CHUNK_BYTES, joined.length));
        }
        pending = joined.length > 0 ? [joined] : [];
        size = joined.length;
      };
      for await (const piece of source) {
        const chunk = Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
        counter.add(chunk);
        pending.push(Buffer.from(chunk));
        size += chunk.length;
        if (size >= CHUNK_BYTES) await flush(false);
      }
      counter.finish();
      await flush(true);
      await this.blobs.complete(ref, counter.bytes);
    } catch (err) {
      await this.blobs.delete(ref).catch(() => undefined);
      throw err;
    }
    return { ref, bytes: counter.bytes, lines: counter.lines };
  }

  async open(ref: string, range?: ByteRange): Promise<Readable> {
    const blob = await this.blobs.get(ref);
    if (blob === undefined || !blob.complete) throw new HerdError('NOT_FOUND', `the bytes of batch file ${ref.slice(0, 64)} are not in the database`);
    const start = range?.start ?? 0;
    const end = Math.min(range?.end ?? blob.bytes - 1, blob.bytes - 1);
    return Readable.from(readRange(this.blobs, ref, blob.chunkBytes, start, end));
  }

  async delete(ref: string): Promise<void> {
    await this.blobs.delete(ref);
  }

  /** Once per process: blobs a crash left incomplete a day ago or more are removed. */
  private async sweepOnce(): Promise<void> {
    if (this.swept) return;
    this.swept = true;
    for (const ref of await this.blobs.listIncomplete(this.now() - STALE_INCOMPLETE_MS)) await this.blobs.delete(ref);
  }
}

async function* readRange(blobs: FileBlobStore, ref: string, chunkBytes: number, start: number, end: number): AsyncGenerator<Buffer> {
  if (end < start) return;
  const last = Math.floor(end / chunkBytes);
  for (let seq = Math.floor(start / chunkBytes); seq <= last; seq += CHUNKS_PER_READ) {
    const chunks = await blobs.chunks(ref, seq, Math.min(last, seq + CHUNKS_PER_READ - 1));
    for (let i = 0; i < chunks.length; i++) {
      const chunk = chunks[i] as Buffer;
      const at = (seq + i) * chunkBytes;
      const from = Math.max(0, start - at);
      const to = Math.min(chunk.length, end - at + 1);
      if (to > from) yield chunk.subarray(from, to);
    }
  }
}
