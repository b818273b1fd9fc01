// gRPC's framing over HTTP/2 (PROTOCOL-HTTP2.md): length-prefixed messages out of DATA chunks (compressed ones
// inflated per grpc-encoding, each bounded), grpc-timeout parsed, grpc-message percent-encoded.
import { gunzipSync, inflateSync } from 'node:zlib';
import { HerdError } from '../core/errors.ts';

/** The message codings a request may use; the order is what grpc-accept-encoding advertises. */
export const ACCEPTED_ENCODINGS = 'identity,deflate,gzip';
export type MessageEncoding = 'identity' | 'deflate' | 'gzip';

export function isMessageEncoding(value: string): value is MessageEncoding {
  return value === 'identity' || value === 'deflate' || value === 'gzip';
}

/** Splits a call's DATA into messages as they complete; one chunk holding a whole message hands out a view of it. */
export class GrpcMessageReader {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(
    private readonly encoding: MessageEncoding,
    private readonly maxMessageBytes: number,
    private readonly onMessage: (message: Buffer) => void,
  ) {}

  /** Throws a HerdError (a status to end the call with) for a message too large or not decodable. */
  push(chunk: Buffer): void {
    let data = chunk;
    if (this.pendingBytes > 0) {
      this.pending.push(chunk);
      this.pendingBytes += chunk.length;
      // Still short of the prefix or of the message: wait without copying.
      if (this.pendingBytes < 5 || this.pendingBytes < 5 + readLength(this.pending)) return;
      data = Buffer.concat(this.pending, this.pendingBytes);
      this.pending = [];
      this.pendingBytes = 0;
    }
    let pos = 0;
    while (data.length - pos >= 5) {
      const compressed = data[pos] as number;
      const length = data.readUInt32BE(pos + 1);
      if (length > this.maxMessageBytes) throw new HerdError('PAYLOAD_TOO_LARGE', `Received message larger than max (${length} vs. ${this.maxMessageBytes})`);
      if (data.length - pos - 5 < length) break;
      const body = data.subarray(pos + 5, pos + 5 + length);
      pos += 5 + length;
      this.onMessage(compressed === 0 ? body : this.inflate(compressed, body));
    }
    if (pos < data.length) {
      const rest = data.subarray(pos);
      this.pending.push(rest);
      this.pendingBytes = rest.length;
    }
  }

  /** True when DATA ended inside a message. */
  get partial(): boolean {
    return this.pendingBytes > 0;
  }

  private inflate(flag: number, body: Buffer): Buffer {
    if (flag !== 1 || this.encoding === 'identity') {
      throw new HerdError('INTERNAL', flag !== 1 ? `Unknown message compression flag ${flag}` : 'Received compressed message but "grpc-encoding" header was identity');
    }
    try {
      const out = this.encoding === 'gzip' ? gunzipSync(body, { maxOutputLength: this.maxMessageBytes }) : inflateSync(body, { maxOutputLength: this.maxMessageBytes });
      return out;
    } catch (err) {
      if (err instanceof RangeError) throw new HerdError('PAYLOAD_TOO_LARGE', `Received message larger than max (decompressed beyond ${this.maxMessageBytes})`);
      throw new HerdError('INTERNAL', 'Failed to decompress message');
    }
  }
}

/** The message length once the first five bytes of `chunks` are in. */
function readLength(chunks: Buffer[]): number {
  const first = chunks[0] as Buffer;
  if (first.length >= 5) return first.readUInt32BE(1);
  return Buffer.concat(chunks, 5).readUInt32BE(1);
}

const TIMEOUT_UNITS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000_001 };

/** A grpc-timeout header (`100m`, `5S`, …) in milliseconds; undefined when absent, NaN when malformed. */
export function parseGrpcTimeout(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const match = /^(\d{1,8})([HMSmun])$/.exec(value);
  if (!match) return Number.NaN;
  return Number(match[1]) * (TIMEOUT_UNITS[match[2] as string] as number);
}

/** grpc-message's percent-encoding: printable ASCII except '%' as is, every other UTF-8 byte as %XX. */
export function encodeGrpcMessage(text: string): string {
  if (/^[\x20-\x24\x26-\x7e]*$/.test(text)) return text;
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    out += byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
