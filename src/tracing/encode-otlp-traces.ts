// Ended spans as an OTLP ExportTraceServiceRequest in protobuf (opentelemetry-proto v1.11.0 field numbers:
// collector/trace/v1, trace/v1, common/v1, resource/v1), written in one pass into one growing buffer: each
// nested message reserves one length byte and moves its body up when it turns out longer than 127 bytes.
// Measured against protobufjs's Writer and the SDK's serializers: docs/decisions/tracing-exporter.md.
import { type AttributeList, type RecordedSpan, type SpanEvent, toAttributeList } from './recorded-span.ts';
import type { AttributeValue } from './tracer.ts';

/** Fixed for the process: its encoded resource and scope are kept (RESOURCE_BYTES) and reused by every request. */
export interface OtlpResource {
  attributes: Readonly<Record<string, AttributeValue>>;
  scopeName: string;
  scopeVersion: string;
}

// Wire types: 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32.
const tag = (field: number, wire: number) => (field << 3) | wire;
const LEN = 2;
// Span.flags: the sampled trace flag, plus bit 8 (whether the parent is remote is known) and bit 9 (it is).
const FLAGS_SAMPLED = 0x01;
const FLAGS_HAS_IS_REMOTE = 0x100;
const FLAGS_IS_REMOTE = 0x200;
const TWO_32 = 4294967296;

/**
 * Attribute keys, event names and span names repeat on every span: each is encoded once (tag, length, UTF-8) and
 * copied after, per tag. Bounded, so names made from client input (model names) cannot grow it without limit.
 */
type FieldCache = Map<string, Uint8Array>;
const KEY_FIELDS: FieldCache = new Map();
const EVENT_NAME_FIELDS: FieldCache = new Map();
const SPAN_NAME_FIELDS: FieldCache = new Map();
const MAX_CACHED_FIELDS = 4096;
let cachedFields = 0;
/** The resource's and the scope's fields, encoded once for each OtlpResource. */
const RESOURCE_BYTES = new WeakMap<OtlpResource, { bytes: Uint8Array; scopeSpansAt: number }>();

/** A lowercase hex digit's char code → its value. */
const HEX_DIGIT = new Uint8Array(128);
for (let i = 0; i < 16; i++) HEX_DIGIT['0123456789abcdef'.charCodeAt(i)] = i;

const varintSize = (n: number) => (n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5);

class Out {
  buf: Buffer;
  pos = 0;
  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }

  /** Room for `n` more bytes. */
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  byte(b: number): void {
    this.buf[this.pos++] = b;
  }

  varint(n: number): void {
    while (n >= 0x80) {
      this.buf[this.pos++] = (n & 0x7f) | 0x80;
      n = Math.floor(n / 128);
    }
    this.buf[this.pos++] = n;
  }

  /** Starts a length-delimited field: its tag and one reserved length byte; returns where the length goes. */
  open(tagByte: number): number {
    this.ensure(16);
    this.buf[this.pos++] = tagByte;
    return this.pos++;
  }

  /** Ends the field `open` started: writes its length, moving the body up when the length needs more than a byte. */
  close(at: number): void {
    const size = this.pos - at - 1;
    if (size < 0x80) {
      this.buf[at] = size;
      return;
    }
    const extra = varintSize(size) - 1;
    this.ensure(extra);
    this.buf.copyWithin(at + 1 + extra, at + 1, this.pos);
    const end = this.pos + extra;
    this.pos = at;
    this.varint(size);
    this.pos = end;
  }

  string(tagByte: number, s: string): void {
    const at = this.open(tagByte);
    this.ensure(s.length * 3);
    const buf = this.buf;
    let pos = this.pos;
    // ASCII (keys, names, ids) byte by byte; anything else through Buffer's UTF-8 writer.
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) {
        pos = this.pos + buf.write(s, this.pos, 'utf8');
        break;
      }
      buf[pos++] = c;
    }
    this.pos = pos;
    this.close(at);
  }

  /** A string field whose encoding repeats (a key, a name): from its cache, encoded there on its first use. */
  cachedString(byTag: FieldCache, tagByte: number, s: string): void {
    const bytes = byTag.get(s);
    if (bytes !== undefined) {
      this.bytes(bytes);
      return;
    }
    const start = this.pos;
    this.string(tagByte, s);
    if (cachedFields < MAX_CACHED_FIELDS) {
      byTag.set(s, new Uint8Array(this.buf.subarray(start, this.pos)));
      cachedFields++;
    }
  }

  bytes(bytes: Uint8Array): void {
    const n = bytes.length;
    this.ensure(n);
    const buf = this.buf;
    let pos = this.pos;
    // A byte loop: cheaper than Buffer#copy's native call for the few dozen bytes of a key or name.
    if (n < 64) for (let i = 0; i < n; i++) buf[pos++] = bytes[i] as number;
    else {
      buf.set(bytes, pos);
      pos += n;
    }
    this.pos = pos;
  }

  hex(tagByte: number, hex: string): void {
    this.ensure(2 + hex.length / 2);
    this.buf[this.pos++] = tagByte;
    this.buf[this.pos++] = hex.length / 2;
    // Ids are lowercase hex (span-ids.ts, trace-parent.ts): a table lookup per digit, no native call.
    const buf = this.buf;
    let pos = this.pos;
    for (let i = 0; i < hex.length; i += 2) buf[pos++] = ((HEX_DIGIT[hex.charCodeAt(i)] as number) << 4) | (HEX_DIGIT[hex.charCodeAt(i + 1)] as number);
    this.pos = pos;
  }

  fixed32(n: number): void {
    this.ensure(4);
    this.buf.writeUInt32LE(n >>> 0, this.pos);
    this.pos += 4;
  }

  /** Epoch milliseconds (microsecond fractions) as fixed64 nanoseconds, exact past 2^53, with no BigInt or `%` on doubles. */
  timeNs(tagByte: number, ms: number): void {
    this.ensure(9);
    this.buf[this.pos++] = tagByte;
    const whole = Math.floor(ms);
    const fracNs = Math.round((ms - whole) * 1000) * 1000;
    // whole·10^6 = high·10^6·2^21 + low·10^6 (+ the fraction): each part exact in a double, added as 32-bit halves.
    const high = Math.floor(whole / 2097152);
    const part1 = high * 1_000_000;
    const part2 = (whole - high * 2097152) * 1_000_000 + fracNs;
    const part1Hi = Math.floor(part1 / 2048);
    const part2Hi = Math.floor(part2 / TWO_32);
    let lo = (part1 - part1Hi * 2048) * 2097152 + (part2 - part2Hi * TWO_32);
    let hi = part1Hi + part2Hi;
    if (lo >= TWO_32) {
      lo -= TWO_32;
      hi += 1;
    }
    this.buf.writeUInt32LE(lo, this.pos);
    this.buf.writeUInt32LE(hi, this.pos + 4);
    this.pos += 8;
  }
}

/** One request for `spans`: one ResourceSpans, one ScopeSpans. */
export function encodeOtlpTraces(spans: readonly RecordedSpan[], resource: OtlpResource): Uint8Array {
  const out = new Out(512 + spans.length * 512);
  const resourceSpans = out.open(tag(1, LEN)); // ExportTraceServiceRequest.resource_spans
  const head = RESOURCE_BYTES.get(resource);
  let scopeSpans: number;
  if (head === undefined) {
    const start = out.pos;
    scopeSpans = writeResourceAndScope(out, resource);
    // Kept up to inside the open scope_spans field: its length byte is rewritten by close() each time.
    RESOURCE_BYTES.set(resource, { bytes: new Uint8Array(out.buf.subarray(start, out.pos)), scopeSpansAt: scopeSpans - start });
  } else {
    scopeSpans = out.pos + head.scopeSpansAt;
    out.bytes(head.bytes);
  }
  for (const span of spans) {
    const at = out.open(tag(2, LEN)); // ScopeSpans.spans
    writeSpan(out, span);
    out.close(at);
  }
  out.close(scopeSpans);
  out.close(resourceSpans);
  return out.buf.subarray(0, out.pos);
}

/** ResourceSpans.resource, then ResourceSpans.scope_spans opened with its ScopeSpans.scope; returns scope_spans' length position. */
function writeResourceAndScope(out: Out, resource: OtlpResource): number {
  const res = out.open(tag(1, LEN)); // ResourceSpans.resource
  writeAttributes(out, tag(1, LEN), toAttributeList(resource.attributes)); // Resource.attributes
  out.close(res);
  const scopeSpans = out.open(tag(2, LEN)); // ResourceSpans.scope_spans
  const scope = out.open(tag(1, LEN)); // ScopeSpans.scope
  out.string(tag(1, LEN), resource.scopeName);
  out.string(tag(2, LEN), resource.scopeVersion);
  out.close(scope);
  return scopeSpans;
}

function writeSpan(out: Out, span: RecordedSpan): void {
  out.hex(tag(1, LEN), span.traceId);
  out.hex(tag(2, LEN), span.spanId);
  if (span.traceState !== undefined) out.string(tag(3, LEN), span.traceState);
  if (span.parentSpanId !== undefined) out.hex(tag(4, LEN), span.parentSpanId);
  out.cachedString(SPAN_NAME_FIELDS, tag(5, LEN), span.name);
  out.ensure(2);
  out.byte(tag(6, 0));
  out.byte(span.kind);
  out.timeNs(tag(7, 1), span.startMs);
  out.timeNs(tag(8, 1), span.endMs);
  writeAttributes(out, tag(9, LEN), span.attributes);
  out.ensure(24);
  if (span.droppedAttributes > 0) {
    out.byte(tag(10, 0));
    out.varint(span.droppedAttributes);
  }
  if (span.events !== undefined) for (const event of span.events) writeEvent(out, event);
  out.ensure(24);
  if (span.droppedEvents > 0) {
    out.byte(tag(12, 0));
    out.varint(span.droppedEvents);
  }
  if (span.statusCode !== 0) {
    const at = out.open(tag(15, LEN));
    if (span.statusMessage !== '') out.string(tag(2, LEN), span.statusMessage);
    out.ensure(2);
    out.byte(tag(3, 0));
    out.byte(span.statusCode);
    out.close(at);
  }
  const remote = span.parentSpanId === undefined ? 0 : FLAGS_HAS_IS_REMOTE | (span.parentRemote ? FLAGS_IS_REMOTE : 0);
  out.ensure(2);
  out.varint(tag(16, 5)); // field 16: a two-byte tag
  out.fixed32(FLAGS_SAMPLED | remote);
}

function writeEvent(out: Out, event: SpanEvent): void {
  const at = out.open(tag(11, LEN));
  out.timeNs(tag(1, 1), event.timeMs);
  out.cachedString(EVENT_NAME_FIELDS, tag(2, LEN), event.name);
  if (event.attributes !== undefined) writeAttributes(out, tag(3, LEN), event.attributes);
  out.close(at);
}

function writeAttributes(out: Out, tagByte: number, attributes: AttributeList): void {
  const { keys, values } = attributes;
  for (let i = 0; i < keys.length; i++) {
    const kv = out.open(tagByte); // KeyValue
    out.cachedString(KEY_FIELDS, tag(1, LEN), keys[i] as string);
    const value = out.open(tag(2, LEN)); // KeyValue.value: AnyValue
    writeAnyValue(out, values[i] as AttributeValue);
    out.close(value);
    out.close(kv);
  }
}

function writeAnyValue(out: Out, value: AttributeValue): void {
  if (typeof value === 'string') {
    out.string(tag(1, LEN), value);
    return;
  }
  out.ensure(12);
  if (typeof value === 'boolean') {
    out.byte(tag(2, 0));
    out.byte(value ? 1 : 0);
  } else if (typeof value === 'number') {
    if (Number.isSafeInteger(value)) {
      out.byte(tag(3, 0));
      writeInt64(out, value);
    } else {
      out.byte(tag(4, 1));
      out.buf.writeDoubleLE(value, out.pos);
      out.pos += 8;
    }
  } else {
    const array = out.open(tag(5, LEN)); // ArrayValue
    for (const item of value) {
      const at = out.open(tag(1, LEN));
      writeAnyValue(out, item);
      out.close(at);
    }
    out.close(array);
  }
}

/** A safe integer as an int64 varint: a negative one as its 64-bit two's complement (ten bytes). */
function writeInt64(out: Out, n: number): void {
  if (n >= 0) {
    out.varint(n);
    return;
  }
  const abs = -n;
  let lo = (~(abs % TWO_32) + 1) >>> 0;
  let hi = ~Math.floor(abs / TWO_32) >>> 0;
  if (lo === 0) hi = (hi + 1) >>> 0;
  for (let i = 0; i < 9; i++) {
    out.byte((lo & 0x7f) | 0x80);
    lo = ((lo >>> 7) | (hi << 25)) >>> 0;
    hi >>>= 7;
  }
  out.byte(lo & 0x01);
}
