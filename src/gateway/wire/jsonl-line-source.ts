// A JSONL byte stream (a stored batch file, an upstream batch's results) as its lines, streaming: split on \n
// across chunks (a \r before it dropped, a last line without \n kept, blank lines skipped but counted), each with
// its byte range in the file.

/** One request of a batch as a line source yields it; the validator parses `bytes`. */
export interface BatchSourceRecord {
  /** 1-based: the line in a JSONL file (blank lines count, as an editor shows them), the item in a JSON array. */
  lineNo: number;
  /** Where the record's bytes are in the stored file: the store keeps this range, never a copy. */
  byteOffset: number;
  byteLength: number;
  /** The record's bytes; undefined when `problem` says why they were not kept. */
  bytes: Buffer | undefined;
  problem?: 'too_long' | undefined;
}

export interface LineSourceOptions {
  /** A record longer than this is refused (its bytes are skipped, not buffered). */
  maxLineBytes: number;
}

const NEWLINE = 0x0a;
const CR = 0x0d;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** The non-blank lines of a JSONL byte stream; memory stays within one line plus one chunk. */
export async function* readJsonlLines(source: AsyncIterable<Uint8Array | string>, options: LineSourceOptions): AsyncGenerator<BatchSourceRecord> {
  const line = new LineBuffer(options.maxLineBytes);
  let lineNo = 1;
  let position = 0;
  for await (const piece of source) {
    const chunk = typeof piece === 'string' ? Buffer.from(piece, 'utf8') : Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    let start = 0;
    while (start < chunk.length) {
      const end = chunk.indexOf(NEWLINE, start);
      if (end === -1) {
        line.append(chunk.subarray(start));
        break;
      }
      line.append(chunk.subarray(start, end));
      const record = line.take(lineNo);
      if (record !== undefined) yield record;
      lineNo += 1;
      line.start = position + end + 1;
      start = end + 1;
    }
    position += chunk.length;
  }
  const last = line.take(lineNo);
  if (last !== undefined) yield last;
}

/** The current line's pieces; a line past the limit keeps only its length. */
class LineBuffer {
  start = 0;
  private pieces: Buffer[] = [];
  private length = 0;

  constructor(private readonly maxBytes: number) {}

  append(piece: Buffer): void {
    if (piece.length === 0) return;
    this.length += piece.length;
    if (this.length > this.maxBytes + 1) {
      // +1: the \r a CRLF line ends with is not the record's.
      this.pieces = [];
      return;
    }
    this.pieces.push(piece);
  }

  /** The finished line (undefined when blank), and a fresh buffer for the next. */
  take(lineNo: number): BatchSourceRecord | undefined {
    const { start, length, pieces } = this;
    this.pieces = [];
    this.length = 0;
    if (length > this.maxBytes + 1) return { lineNo, byteOffset: start, byteLength: length, bytes: undefined, problem: 'too_long' };
    let bytes = pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces, length);
    let offset = start;
    if (bytes.length > 0 && bytes[bytes.length - 1] === CR) bytes = bytes.subarray(0, bytes.length - 1);
    // A UTF-8 byte order mark some editors write first: not part of the first line's JSON.
    if (start === 0 && bytes.subarray(0, 3).equals(BOM)) {
      bytes = bytes.subarray(3);
      offset = 3;
    }
    if (isBlank(bytes)) return undefined;
    if (bytes.length > this.maxBytes) return { lineNo, byteOffset: offset, byteLength: bytes.length, bytes: undefined, problem: 'too_long' };
    return { lineNo, byteOffset: offset, byteLength: bytes.length, bytes };
  }
}

function isBlank(bytes: Buffer): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (b !== 0x20 && b !== 0x09 && b !== CR) return false;
  }
  return true;
}
