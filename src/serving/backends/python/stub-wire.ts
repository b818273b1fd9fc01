// Herd's side of the Python stub's wire format (the stub's herd_stub_wire.py is the other side): an
// 8-byte little-endian header (JSON length, body length), the JSON header, then the raw body bytes.
import { HerdError } from '../../../core/errors.ts';

export interface StubFrame {
  header: StubHeader;
  /** The frame's body: tensor bytes the header's descriptors point into. */
  body: Buffer;
}

/** Every frame's JSON header has a type; the rest depends on it (see python-stub-messages.ts). */
export interface StubHeader {
  type: string;
  [key: string]: unknown;
}

const PREFIX = 8;

/** The frame as buffers to write in order (the body parts are not copied). */
export function encodeStubFrame(header: StubHeader, parts: readonly Uint8Array[] = []): Buffer[] {
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  let bodySize = 0;
  for (const part of parts) bodySize += part.byteLength;
  const prefix = Buffer.allocUnsafe(PREFIX);
  prefix.writeUInt32LE(json.byteLength, 0);
  prefix.writeUInt32LE(bodySize, 4);
  return [prefix, json, ...parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength))];
}

/** Reassembles frames from the chunks a pipe delivers. */
export class StubFrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;

  /** Feeds one chunk; returns the frames it completed. */
  push(chunk: Buffer): StubFrame[] {
    this.chunks.push(chunk);
    this.buffered += chunk.byteLength;
    const frames: StubFrame[] = [];
    for (;;) {
      if (this.buffered < PREFIX) break;
      const head = this.peek(PREFIX);
      const jsonSize = head.readUInt32LE(0);
      const bodySize = head.readUInt32LE(4);
      const total = PREFIX + jsonSize + bodySize;
      if (this.buffered < total) break;
      const frame = this.take(total);
      let header: StubHeader;
      try {
        header = JSON.parse(frame.toString('utf8', PREFIX, PREFIX + jsonSize)) as StubHeader;
      } catch (err) {
        throw new HerdError('INTERNAL', `python stub sent a malformed frame header: ${(err as Error).message}`);
      }
      frames.push({ header, body: frame.subarray(PREFIX + jsonSize) });
    }
    return frames;
  }

  private peek(size: number): Buffer {
    const first = this.chunks[0] as Buffer;
    return first.byteLength >= size ? first : Buffer.concat(this.chunks).subarray(0, size);
  }

  private take(size: number): Buffer {
    let out: Buffer;
    const first = this.chunks[0] as Buffer;
    if (first.byteLength >= size) {
      out = first.subarray(0, size);
      if (first.byteLength === size) this.chunks.shift();
      else this.chunks[0] = first.subarray(size);
    } else {
      const all = Buffer.concat(this.chunks);
      out = all.subarray(0, size);
      this.chunks = all.byteLength > size ? [all.subarray(size)] : [];
    }
    this.buffered -= size;
    return out;
  }
}
