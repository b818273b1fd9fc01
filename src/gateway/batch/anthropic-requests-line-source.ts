// An Anthropic Message Batches body (`{"requests": [{custom_id, params}, …], …}`, up to 256 MB) as its items,
// streaming: a byte scanner yields each item's bytes and byte range in the stored body, and keeps the rest of
// the body (every other field, with `requests` emptied) to parse once at the end, so the whole body is checked.
import { HerdError } from '../../core/errors.ts';
import type { BatchSourceRecord, LineSourceOptions } from '../wire/jsonl-line-source.ts';

/** Deepest nesting of arrays and objects in the body, as the realtime routes allow (docs/security.md). */
const MAX_DEPTH = 128;
/** The body's fields besides `requests` (Anthropic defines none): bounded, as they are kept in memory. */
const MAX_SKELETON_BYTES = 1 << 20;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

const invalid = (message: string, param = 'requests') => new HerdError('INVALID_ARG', message, { param });

/** The items of the body's `requests` array, in order; INVALID_ARG when the body is not a JSON object holding one. */
export async function* readAnthropicRequests(source: AsyncIterable<Uint8Array | string>, options: LineSourceOptions): AsyncGenerator<BatchSourceRecord> {
  const scanner = new RequestsScanner(options.maxLineBytes);
  for await (const piece of source) {
    const chunk = typeof piece === 'string' ? Buffer.from(piece, 'utf8') : Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    yield* scanner.feed(chunk);
  }
  scanner.finish();
}

type Phase = 'before' | 'object' | 'items' | 'after';

/** One pass over the body's bytes; strings are skipped whole, so brackets inside them never count. */
class RequestsScanner {
  private phase: Phase = 'before';
  private depth = 0;
  private inString = false;
  private escaped = false;
  private position = 0;
  /** The body without the items; parsed at the end. */
  private skeleton: Buffer[] = [];
  private skeletonBytes = 0;
  /** At depth 1: the key just read (its JSON text), and whether the next value is the `requests` array. */
  private keyStart = -1;
  private lastKey: string | undefined;
  private sawRequests = false;
  /** The item being read inside `requests`. */
  private item: { start: number; pieces: Buffer[]; length: number; scalar: boolean } | undefined;
  private itemCount = 0;
  /** Inside `requests`, what may come next outside an item. */
  private expect: 'first' | 'item' | 'comma' = 'first';

  constructor(private readonly maxItemBytes: number) {}

  feed(chunk: Buffer): BatchSourceRecord[] {
    const out: BatchSourceRecord[] = [];
    // Bytes of this chunk from `keep` on belong to the skeleton (outside the items) or to the current item.
    let keep = 0;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === BACKSLASH) this.escaped = true;
        else if (c === QUOTE) {
          this.inString = false;
          if (this.item?.scalar === true && this.depth === 2) keep = this.endItem(chunk, keep, i + 1, out);
          else if (this.phase === 'object' && this.depth === 1 && this.keyStart >= 0) {
            this.addSkeleton(chunk.subarray(keep, i + 1));
            keep = i + 1;
            this.lastKey = this.readKey();
          }
        }
        continue;
      }
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
        if (this.item?.scalar === true && this.depth === 2) keep = this.endItem(chunk, keep, i, out);
        continue;
      }
      if (this.phase === 'items' && this.depth === 2) {
        if (this.item?.scalar === true && (c === COMMA || c === CLOSE_BRACKET)) keep = this.endItem(chunk, keep, i, out);
        if (this.item === undefined) {
          const next = this.between(c, i);
          if (next !== undefined) {
            keep = next;
            continue;
          }
          keep = i;
          this.item = { start: this.position + i, pieces: [], length: 0, scalar: c !== OPEN_BRACE && c !== OPEN_BRACKET };
        }
      }
      keep = this.structure(c, chunk, keep, i, out);
    }
    this.carry(chunk.subarray(keep));
    this.position += chunk.length;
    return out;
  }

  /** A byte outside strings: nesting, keys, and where `requests` opens; returns the new `keep`. */
  private structure(c: number, chunk: Buffer, keep: number, i: number, out: BatchSourceRecord[]): number {
    if (this.phase === 'after' || (this.phase === 'before' && c !== OPEN_BRACE)) throw invalid('The request body must be a JSON object with a `requests` array.');
    if (c === QUOTE) {
      this.inString = true;
      if (this.phase === 'object' && this.depth === 1 && this.lastKey === undefined) {
        this.addSkeleton(chunk.subarray(keep, i));
        this.keyStart = this.skeletonBytes;
        return i;
      }
      return keep;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (this.phase === 'before') this.phase = 'object';
      else if (this.phase === 'object' && this.depth === 1 && this.lastKey === 'requests' && c === OPEN_BRACKET) {
        if (this.sawRequests) throw invalid('`requests` is given twice.');
        this.sawRequests = true;
        this.addSkeleton(chunk.subarray(keep, i + 1));
        this.phase = 'items';
        this.expect = 'first';
        this.depth = 2;
        return i + 1;
      }
      if (++this.depth > MAX_DEPTH) throw invalid(`The JSON body of your request nests deeper than ${MAX_DEPTH} levels of arrays and objects, which the server refuses.`);
      return keep;
    }
    if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      this.depth -= 1;
      if (this.phase === 'items' && this.depth === 2 && this.item !== undefined) return this.endItem(chunk, keep, i + 1, out);
      if (this.depth === 0) this.phase = 'after';
      return keep;
    }
    // After a value at depth 1 (`,`) the next string is a key again; after `:` it is the value.
    if (this.phase === 'object' && this.depth === 1 && c === COMMA) {
      this.lastKey = undefined;
      this.keyStart = -1;
    } else if (this.phase === 'object' && this.depth === 1 && c !== COLON && this.lastKey === undefined) {
      throw invalid('The request body is not valid JSON.');
    }
    return keep;
  }

  /**
   * Inside `requests` between items: a comma or the closing bracket (where JSON allows them) moves on and
   * returns the new `keep`; undefined when `c` starts an item.
   */
  private between(c: number, i: number): number | undefined {
    if (c === COMMA) {
      if (this.expect !== 'comma') throw invalid('The request body is not valid JSON: a misplaced `,` in `requests`.');
      this.expect = 'item';
      return i + 1;
    }
    if (c === CLOSE_BRACKET) {
      if (this.expect === 'item') throw invalid('The request body is not valid JSON: a `,` before the `]` of `requests`.');
      this.phase = 'object';
      this.depth = 1;
      return i;
    }
    if (this.expect === 'comma') throw invalid('The request body is not valid JSON: a `,` is missing between two items of `requests`.');
    if (c === CLOSE_BRACE || c === COLON) throw invalid('The request body is not valid JSON.');
    this.expect = 'comma';
    return undefined;
  }

  /** The current item ends before `end` in `chunk`: handed out, and the next one may start. */
  private endItem(chunk: Buffer, keep: number, end: number, out: BatchSourceRecord[]): number {
    const item = this.item!;
    this.item = undefined;
    this.addItemPiece(item, chunk.subarray(keep, end));
    this.itemCount += 1;
    const tooLong = item.length > this.maxItemBytes;
    const bytes = tooLong ? undefined : item.pieces.length === 1 ? item.pieces[0]! : Buffer.concat(item.pieces, item.length);
    out.push({ lineNo: this.itemCount, byteOffset: item.start, byteLength: item.length, bytes, problem: tooLong ? 'too_long' : undefined });
    return end;
  }

  private carry(rest: Buffer): void {
    if (this.item !== undefined) this.addItemPiece(this.item, rest);
    else this.addSkeleton(rest);
  }

  private addItemPiece(item: { pieces: Buffer[]; length: number }, piece: Buffer): void {
    if (piece.length === 0) return;
    item.length += piece.length;
    // Past the limit only the length is kept: the item is refused without being held.
    if (item.length > this.maxItemBytes) item.pieces = [];
    else item.pieces.push(piece);
  }

  private addSkeleton(piece: Buffer): void {
    if (piece.length === 0 || this.phase === 'items') return;
    this.skeletonBytes += piece.length;
    if (this.skeletonBytes > MAX_SKELETON_BYTES) throw invalid(`The request body's fields besides \`requests\` exceed ${MAX_SKELETON_BYTES} bytes.`);
    // Copied: a chunk's bytes are not held past its turn.
    this.skeleton.push(Buffer.from(piece));
  }

  /** The key that just closed (the skeleton's last pieces since keyStart), as JSON.parse reads it, escapes and all. */
  private readKey(): string {
    const parts: Buffer[] = [];
    for (let k = this.skeleton.length - 1, need = this.skeletonBytes - this.keyStart; need > 0 && k >= 0; k--) {
      const piece = this.skeleton[k]!;
      parts.unshift(piece);
      need -= piece.length;
    }
    const text = Buffer.concat(parts).toString('utf8');
    this.keyStart = -1;
    try {
      return JSON.parse(text) as string;
    } catch {
      throw invalid('The request body is not valid JSON.');
    }
  }

  /** The end of the body: the skeleton must parse (the body was whole JSON) and have had `requests`. */
  finish(): void {
    if (this.phase !== 'after' || this.inString) throw invalid('The request body is not valid JSON: it ends before its last `}`.');
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.concat(this.skeleton).toString('utf8'));
    } catch {
      throw invalid('The request body is not valid JSON.');
    }
    // A later `requests` that is not an array would win in JSON.parse: the items read are not the body's.
    const requests = (parsed as { requests?: unknown }).requests;
    if (!this.sawRequests || !Array.isArray(requests)) throw invalid('`requests` is required: an array of {custom_id, params}.');
  }
}
