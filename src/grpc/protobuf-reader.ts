// The few protobuf wire reads the hand-written ModelInferRequest decoder needs: varints, length-delimited
// fields as views into the received buffer (never copies), and skipping fields it does not read.
import { HerdError } from '../core/errors.ts';

/** What grpc-js answered for a message its deserializer refused: kept so clients see the same status and words. */
export class UndecodableMessage extends HerdError {
  constructor() {
    super('INTERNAL', 'Error deserializing request');
  }
}

const utf8 = new TextDecoder();

export class ProtobufReader {
  pos: number;

  constructor(
    readonly buf: Uint8Array,
    start = 0,
    readonly end = buf.length,
  ) {
    this.pos = start;
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  /** A varint up to 2^53 exactly (larger ones lose precision; only int64 fields can hold them). */
  varint(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new UndecodableMessage();
      const byte = this.buf[this.pos++] as number;
      result += (byte & 0x7f) * scale;
      if (byte < 0x80) return result;
      scale *= 128;
    }
    throw new UndecodableMessage();
  }

  /** A varint as a 64-bit two's complement integer, exactly (int64 fields as proto-loader's decimal strings). */
  varint64(): bigint {
    let result = 0n;
    let shift = 0n;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new UndecodableMessage();
      const byte = this.buf[this.pos++] as number;
      result |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return BigInt.asUintN(64, result);
      shift += 7n;
    }
    throw new UndecodableMessage();
  }

  /** The bounds of a length-delimited field's payload; the reader moves past it. */
  span(): [number, number] {
    const length = this.varint();
    const start = this.pos;
    const end = start + length;
    if (end > this.end) throw new UndecodableMessage();
    this.pos = end;
    return [start, end];
  }

  string(): string {
    const [start, end] = this.span();
    return start === end ? '' : utf8.decode(this.buf.subarray(start, end));
  }

  double(): number {
    if (this.pos + 8 > this.end) throw new UndecodableMessage();
    const view = new DataView(this.buf.buffer, this.buf.byteOffset + this.pos, 8);
    this.pos += 8;
    return view.getFloat64(0, true);
  }

  skip(wireType: number): void {
    switch (wireType) {
      case 0:
        this.varint();
        return;
      case 1:
        this.pos += 8;
        break;
      case 2:
        this.span();
        return;
      case 5:
        this.pos += 4;
        break;
      default:
        throw new UndecodableMessage();
    }
    if (this.pos > this.end) throw new UndecodableMessage();
  }
}
