// ModelInferResponse (bare or inside ModelStreamInferResponse) written once into one buffer that already
// holds the gRPC message prefix: sizes first, then the bytes, raw_output_contents copied in place.
import type { InferParameterMessage, ModelInferResponseMessage, ModelStreamInferResponseMessage, ParameterMap } from './grpc-messages.ts';

const PREFIX = 5;

/** A framed ModelInferResponse, ready for the DATA frame. */
export function encodeModelInferResponse(response: ModelInferResponseMessage): Buffer {
  const size = responseSize(response);
  const buf = Buffer.allocUnsafe(PREFIX + size);
  writePrefix(buf, size);
  const end = writeResponse(buf, PREFIX, response);
  return end === buf.length ? buf : buf.subarray(0, end);
}

/** A framed ModelStreamInferResponse. */
export function encodeModelStreamInferResponse(message: ModelStreamInferResponseMessage): Buffer {
  const errorLength = Buffer.byteLength(message.error_message);
  const inner = message.infer_response === null ? -1 : responseSize(message.infer_response);
  const size = (errorLength > 0 ? 1 + varintSize(errorLength) + errorLength : 0) + (inner >= 0 ? 1 + varintSize(inner) + inner : 0);
  const buf = Buffer.allocUnsafe(PREFIX + size);
  writePrefix(buf, size);
  let pos = PREFIX;
  if (errorLength > 0) pos = writeString(buf, pos, 0x0a, message.error_message);
  if (message.infer_response !== null) {
    buf[pos++] = 0x12;
    pos = writeVarint(buf, pos, inner);
    pos = writeResponse(buf, pos, message.infer_response);
  }
  return buf;
}

function writePrefix(buf: Buffer, size: number): void {
  buf[0] = 0;
  buf.writeUInt32BE(size, 1);
}

function responseSize(m: ModelInferResponseMessage): number {
  let size = stringFieldSize(m.model_name) + stringFieldSize(m.model_version) + stringFieldSize(m.id) + mapSize(m.parameters);
  for (const output of m.outputs) {
    const inner = outputSize(output.name, output.datatype, output.shape, output.parameters);
    size += 1 + varintSize(inner) + inner;
  }
  for (const raw of m.raw_output_contents) size += 1 + varintSize(raw.byteLength) + raw.byteLength;
  return size;
}

function writeResponse(buf: Buffer, start: number, m: ModelInferResponseMessage): number {
  let pos = start;
  if (m.model_name !== '') pos = writeString(buf, pos, 0x0a, m.model_name);
  if (m.model_version !== '') pos = writeString(buf, pos, 0x12, m.model_version);
  if (m.id !== '') pos = writeString(buf, pos, 0x1a, m.id);
  pos = writeMap(buf, pos, 0x22, m.parameters);
  for (const output of m.outputs) {
    buf[pos++] = 0x2a;
    pos = writeVarint(buf, pos, outputSize(output.name, output.datatype, output.shape, output.parameters));
    if (output.name !== '') pos = writeString(buf, pos, 0x0a, output.name);
    if (output.datatype !== '') pos = writeString(buf, pos, 0x12, output.datatype);
    if (output.shape.length > 0) {
      buf[pos++] = 0x1a;
      pos = writeVarint(buf, pos, shapeSize(output.shape));
      for (const dim of output.shape) pos = writeInt64(buf, pos, dim);
    }
    if (output.parameters) pos = writeMap(buf, pos, 0x22, output.parameters);
  }
  for (const raw of m.raw_output_contents) {
    buf[pos++] = 0x32;
    pos = writeVarint(buf, pos, raw.byteLength);
    buf.set(raw, pos);
    pos += raw.byteLength;
  }
  return pos;
}

function outputSize(name: string, datatype: string, shape: readonly (number | string)[], parameters: ParameterMap | undefined): number {
  let size = stringFieldSize(name) + stringFieldSize(datatype) + (parameters ? mapSize(parameters) : 0);
  if (shape.length > 0) {
    const packed = shapeSize(shape);
    size += 1 + varintSize(packed) + packed;
  }
  return size;
}

function shapeSize(shape: readonly (number | string)[]): number {
  let size = 0;
  for (const dim of shape) size += int64Size(dim);
  return size;
}

function mapSize(map: ParameterMap): number {
  let size = 0;
  for (const key in map) {
    const entry = entrySize(key, map[key] as InferParameterMessage);
    size += 1 + varintSize(entry) + entry;
  }
  return size;
}

function entrySize(key: string, value: InferParameterMessage): number {
  const param = parameterSize(value);
  return stringFieldSize(key) + 1 + varintSize(param) + param;
}

function parameterSize(p: InferParameterMessage): number {
  if (p.bool_param !== undefined) return 2;
  if (p.int64_param !== undefined) return 1 + int64Size(p.int64_param);
  if (p.string_param !== undefined) return 1 + lengthDelimitedSize(Buffer.byteLength(p.string_param));
  if (p.double_param !== undefined) return 9;
  if (p.uint64_param !== undefined) return 1 + int64Size(p.uint64_param);
  return 0;
}

function writeMap(buf: Buffer, start: number, tag: number, map: ParameterMap): number {
  let pos = start;
  for (const key in map) {
    const value = map[key] as InferParameterMessage;
    buf[pos++] = tag;
    pos = writeVarint(buf, pos, entrySize(key, value));
    if (key !== '') pos = writeString(buf, pos, 0x0a, key);
    buf[pos++] = 0x12;
    pos = writeVarint(buf, pos, parameterSize(value));
    if (value.bool_param !== undefined) {
      buf[pos++] = 0x08;
      buf[pos++] = value.bool_param ? 1 : 0;
    } else if (value.int64_param !== undefined) {
      buf[pos++] = 0x10;
      pos = writeInt64(buf, pos, value.int64_param);
    } else if (value.string_param !== undefined) {
      pos = writeString(buf, pos, 0x1a, value.string_param, true);
    } else if (value.double_param !== undefined) {
      buf[pos++] = 0x21;
      buf.writeDoubleLE(value.double_param, pos);
      pos += 8;
    } else if (value.uint64_param !== undefined) {
      buf[pos++] = 0x28;
      pos = writeInt64(buf, pos, value.uint64_param);
    }
  }
  return pos;
}

function stringFieldSize(value: string): number {
  return value === '' ? 0 : 1 + lengthDelimitedSize(Buffer.byteLength(value));
}

function lengthDelimitedSize(length: number): number {
  return varintSize(length) + length;
}

/** A string field (tag, length, UTF-8); `always` writes an empty one too (a oneof member). */
function writeString(buf: Buffer, start: number, tag: number, value: string, always = false): number {
  if (value === '' && !always) return start;
  buf[start] = tag;
  const length = Buffer.byteLength(value);
  const pos = writeVarint(buf, start + 1, length);
  return pos + (length === 0 ? 0 : buf.write(value, pos, length, 'utf8'));
}

function varintSize(n: number): number {
  let size = 1;
  while (n >= 128) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

function writeVarint(buf: Buffer, start: number, value: number): number {
  let pos = start;
  let n = value;
  while (n >= 128) {
    buf[pos++] = (n % 128) | 0x80;
    n = Math.floor(n / 128);
  }
  buf[pos++] = n;
  return pos;
}

/** A non-negative safe integer as a plain varint; anything else (negative, a decimal string) as 64-bit two's complement. */
function int64Size(value: number | string): number {
  if (typeof value === 'number' && value >= 0 && Number.isSafeInteger(value)) return varintSize(value);
  let n = BigInt.asUintN(64, BigInt(value));
  let size = 1;
  while (n >= 128n) {
    n >>= 7n;
    size++;
  }
  return size;
}

function writeInt64(buf: Buffer, start: number, value: number | string): number {
  if (typeof value === 'number' && value >= 0 && Number.isSafeInteger(value)) return writeVarint(buf, start, value);
  let pos = start;
  let n = BigInt.asUintN(64, BigInt(value));
  while (n >= 128n) {
    buf[pos++] = Number(n & 0x7fn) | 0x80;
    n >>= 7n;
  }
  buf[pos++] = Number(n);
  return pos;
}
