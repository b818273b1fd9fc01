// Where uploaded and produced batch files' bytes live (a folder by default: directory-file-store.ts), behind one
// small interface; which key owns a file and what it is for is the batch store's, not this one's.
import type { Readable } from 'node:stream';
import { HerdError } from '../../core/errors.ts';

export interface PutLimits {
  /** More bytes than this: PAYLOAD_TOO_LARGE, nothing kept. */
  maxBytes: number;
  /** More non-empty lines than this: INVALID_ARG, nothing kept. */
  maxLines: number;
  /** What the bytes are, for the refusal (default: an uploaded batch file, bounded by batch.files.max_bytes). */
  describe?: string;
}

export interface StoredBytes {
  /** The store's name for the bytes; opaque to callers. */
  ref: string;
  bytes: number;
  /** Non-empty lines (a line of only spaces, tabs or \r is empty). */
  lines: number;
}

/** A byte range, `end` inclusive (as fs.createReadStream). */
export interface ByteRange {
  start: number;
  end: number;
}

export interface FileStore {
  /** Stores `source` whole and durably, or nothing (a failure leaves no file behind). */
  put(source: AsyncIterable<Buffer | Uint8Array>, limits: PutLimits): Promise<StoredBytes>;
  /** The bytes (or a range of them); NOT_FOUND when the ref is not stored. */
  open(ref: string, range?: ByteRange): Promise<Readable>;
  /** Removes the bytes; a ref already gone is not an error. */
  delete(ref: string): Promise<void>;
}

/**
 * Counts bytes and non-empty lines across chunks and refuses past the limits, so a store needs no second pass.
 * A line's content is found at its first byte in practice (`{`), so the scan is one indexOf per line.
 */
export class LineCounter {
  bytes = 0;
  lines = 0;
  private open = false;

  constructor(private readonly limits: PutLimits) {}

  add(chunk: Uint8Array): void {
    this.bytes += chunk.length;
    if (this.bytes > this.limits.maxBytes) {
      const what = this.limits.describe ?? 'file exceeds the maximum of {max} bytes for batch files (batch.files.max_bytes)';
      throw new HerdError('PAYLOAD_TOO_LARGE', what.replace('{max}', String(this.limits.maxBytes)), { param: 'file' });
    }
    let start = 0;
    while (start < chunk.length) {
      let end = chunk.indexOf(0x0a, start);
      const closes = end !== -1;
      if (!closes) end = chunk.length;
      if (!this.open) this.open = hasContent(chunk, start, end);
      if (closes) this.closeLine();
      start = end + 1;
    }
  }

  /** The last line, when the file does not end with a newline. */
  finish(): void {
    this.closeLine();
  }

  private closeLine(): void {
    if (!this.open) return;
    this.open = false;
    this.lines += 1;
    if (this.lines > this.limits.maxLines) {
      throw new HerdError('INVALID_ARG', `file has more than ${this.limits.maxLines} requests, the most one batch may hold (batch.max_lines)`, { param: 'file' });
    }
  }
}

function hasContent(chunk: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const b = chunk[i];
    if (b !== 0x20 && b !== 0x09 && b !== 0x0d) return true;
  }
  return false;
}
