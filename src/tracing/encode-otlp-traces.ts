// Ended spans as an OTLP ExportTraceServiceRequest in protobuf (opentelemetry-proto v1.11.0 field numbers:
// collector/trace/v1, trace/v1, common/v1, resource/v1), written field by field with protobufjs's Writer.
import protobuf from 'protobufjs/minimal.js';
import type { RecordedSpan, SpanEvent } from './recorded-span.ts';
import type { AttributeValue } from './tracer.ts';

type Writer = protobuf.Writer;

export interface OtlpResource {
  attributes: Readonly<Record<string, AttributeValue>>;
  scopeName: string;
  scopeVersion: string;
}

// (field number << 3) | wire type: 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32.
const LEN = 2;
const tag = (field: number, wire: number) => (field << 3) | wire;
// Span.flags: the sampled trace flag, plus bit 8 (whether the parent is remote is known) and bit 9 (it is).
const FLAGS_SAMPLED = 0x01;
const FLAGS_HAS_IS_REMOTE = 0x100;
const FLAGS_IS_REMOTE = 0x200;

/** One request for `spans`: one ResourceSpans, one ScopeSpans. */
export function encodeOtlpTraces(spans: readonly RecordedSpan[], resource: OtlpResource): Uint8Array {
  const w = protobuf.Writer.create();
  w.uint32(tag(1, LEN)).fork(); // ExportTraceServiceRequest.resource_spans
  w.uint32(tag(1, LEN)).fork(); // ResourceSpans.resource
  writeAttributes(w, 1, resource.attributes); // Resource.attributes
  w.ldelim();
  w.uint32(tag(2, LEN)).fork(); // ResourceSpans.scope_spans
  w.uint32(tag(1, LEN)).fork(); // ScopeSpans.scope
  w.uint32(tag(1, LEN)).string(resource.scopeName);
  w.uint32(tag(2, LEN)).string(resource.scopeVersion);
  w.ldelim();
  for (const span of spans) {
    w.uint32(tag(2, LEN)).fork(); // ScopeSpans.spans
    writeSpan(w, span);
    w.ldelim();
  }
  w.ldelim();
  w.ldelim();
  return w.finish();
}

function writeSpan(w: Writer, span: RecordedSpan): void {
  w.uint32(tag(1, LEN)).bytes(Buffer.from(span.traceId, 'hex'));
  w.uint32(tag(2, LEN)).bytes(Buffer.from(span.spanId, 'hex'));
  if (span.traceState !== undefined) w.uint32(tag(3, LEN)).string(span.traceState);
  if (span.parentSpanId !== undefined) w.uint32(tag(4, LEN)).bytes(Buffer.from(span.parentSpanId, 'hex'));
  w.uint32(tag(5, LEN)).string(span.name);
  w.uint32(tag(6, 0)).int32(span.kind);
  writeTime(w, 7, span.startMs);
  writeTime(w, 8, span.endMs);
  writeAttributes(w, 9, span.attributes);
  if (span.droppedAttributes > 0) w.uint32(tag(10, 0)).uint32(span.droppedAttributes);
  if (span.events !== undefined) for (const event of span.events) writeEvent(w, event);
  if (span.droppedEvents > 0) w.uint32(tag(12, 0)).uint32(span.droppedEvents);
  if (span.statusCode !== 0) {
    w.uint32(tag(15, LEN)).fork();
    if (span.statusMessage !== '') w.uint32(tag(2, LEN)).string(span.statusMessage);
    w.uint32(tag(3, 0)).int32(span.statusCode);
    w.ldelim();
  }
  const remote = span.parentSpanId === undefined ? 0 : FLAGS_HAS_IS_REMOTE | (span.parentRemote ? FLAGS_IS_REMOTE : 0);
  w.uint32(tag(16, 5)).fixed32(FLAGS_SAMPLED | remote);
}

function writeEvent(w: Writer, event: SpanEvent): void {
  w.uint32(tag(11, LEN)).fork();
  writeTime(w, 1, event.timeMs);
  w.uint32(tag(2, LEN)).string(event.name);
  if (event.attributes !== undefined) writeAttributes(w, 3, event.attributes);
  w.ldelim();
}

/** Epoch milliseconds (with microseconds) as fixed64 nanoseconds, exact past 2^53. */
function writeTime(w: Writer, field: number, ms: number): void {
  const whole = Math.floor(ms);
  const nanos = BigInt(whole) * 1_000_000n + BigInt(Math.round((ms - whole) * 1_000) * 1_000);
  w.uint32(tag(field, 1))
    .fixed32(Number(nanos & 0xffffffffn))
    .fixed32(Number(nanos >> 32n));
}

function writeAttributes(w: Writer, field: number, attributes: Readonly<Record<string, AttributeValue>>): void {
  for (const key in attributes) {
    w.uint32(tag(field, LEN)).fork(); // KeyValue
    w.uint32(tag(1, LEN)).string(key);
    w.uint32(tag(2, LEN)).fork(); // KeyValue.value: AnyValue
    writeAnyValue(w, attributes[key] as AttributeValue);
    w.ldelim();
    w.ldelim();
  }
}

function writeAnyValue(w: Writer, value: AttributeValue): void {
  if (typeof value === 'string') w.uint32(tag(1, LEN)).string(value);
  else if (typeof value === 'boolean') w.uint32(tag(2, 0)).bool(value);
  else if (typeof value === 'number') {
    if (Number.isSafeInteger(value)) w.uint32(tag(3, 0)).int64(value);
    else w.uint32(tag(4, 1)).double(value);
  } else {
    w.uint32(tag(5, LEN)).fork(); // ArrayValue
    for (const item of value) {
      w.uint32(tag(1, LEN)).fork();
      writeAnyValue(w, item);
      w.ldelim();
    }
    w.ldelim();
  }
}
