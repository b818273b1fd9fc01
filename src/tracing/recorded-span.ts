// A span being recorded and, once ended, the plain data the export queue batches and the OTLP encoder
// writes; and the span that is sampled out but still carries its context to children and upstreams.
import { redactText } from './redact.ts';
import type { TraceParent } from './trace-parent.ts';
import type { AttributeValue, Attributes, HerdSpan, SpanKind } from './tracer.ts';

/** OpenTelemetry's default span limits: past them, attributes and events are counted as dropped. */
export const MAX_ATTRIBUTES = 128;
export const MAX_EVENTS = 128;

/** Attributes as parallel arrays: cheaper to fill and to encode than an object whose keys vary. */
export interface AttributeList {
  keys: string[];
  values: AttributeValue[];
}

export interface SpanEvent {
  name: string;
  timeMs: number;
  attributes: AttributeList | undefined;
}

export const StatusCode = { UNSET: 0, OK: 1, ERROR: 2 } as const;

/** Epoch milliseconds with microseconds: the wall clock at start-up plus the monotonic clock since. */
export const nowMs = () => performance.timeOrigin + performance.now();

export class RecordedSpan implements HerdSpan {
  readonly recording = true;
  readonly attributes: AttributeList = { keys: [], values: [] };
  droppedAttributes = 0;
  events: SpanEvent[] | undefined = undefined;
  droppedEvents = 0;
  statusCode: number = StatusCode.UNSET;
  statusMessage = '';
  endMs = 0;
  private own: TraceParent | undefined;

  constructor(
    readonly name: string,
    readonly kind: SpanKind,
    readonly traceId: string,
    readonly spanId: string,
    /** The parent's span id, or undefined for a root. */
    readonly parentSpanId: string | undefined,
    readonly parentRemote: boolean,
    readonly traceState: string | undefined,
    readonly startMs: number,
    private readonly onEnd: (span: RecordedSpan) => void,
  ) {}

  setAttribute(key: string, value: AttributeValue | undefined): void {
    if (value === undefined || this.endMs !== 0) return;
    const { keys, values } = this.attributes;
    const at = keys.indexOf(key);
    if (at >= 0) values[at] = value;
    else if (keys.length >= MAX_ATTRIBUTES) this.droppedAttributes++;
    else {
      keys.push(key);
      values.push(value);
    }
  }

  /** The value recorded for `key` (tests, and callers that read back what they set). */
  attribute(key: string): AttributeValue | undefined {
    const at = this.attributes.keys.indexOf(key);
    return at < 0 ? undefined : this.attributes.values[at];
  }

  setAttributes(attributes: Attributes): void {
    const { keys, values } = this.attributes;
    // A fresh span takes an object's keys as they are (they are distinct): no search per key.
    if (keys.length === 0 && this.endMs === 0) {
      for (const key in attributes) {
        const value = attributes[key];
        if (value === undefined) continue;
        if (keys.length >= MAX_ATTRIBUTES) this.droppedAttributes++;
        else {
          keys.push(key);
          values.push(value);
        }
      }
      return;
    }
    for (const key in attributes) this.setAttribute(key, attributes[key]);
  }

  addEvent(name: string, attributes?: Attributes, time?: number): void {
    if (this.endMs !== 0) return;
    this.events ??= [];
    if (this.events.length >= MAX_EVENTS) {
      this.droppedEvents++;
      return;
    }
    this.events.push({ name, timeMs: time ?? nowMs(), attributes: attributes === undefined ? undefined : toAttributeList(attributes) });
  }

  recordError(error: unknown): void {
    if (this.endMs !== 0) return;
    const { type, message } = describeError(error);
    this.statusCode = StatusCode.ERROR;
    this.statusMessage = message;
    if (!this.attributes.keys.includes('error.type')) this.setAttribute('error.type', type);
    this.addEvent('exception', { 'exception.type': type, 'exception.message': message });
  }

  end(time?: number): void {
    if (this.endMs !== 0) return;
    this.endMs = Math.max(time ?? nowMs(), this.startMs);
    this.onEnd(this);
  }

  context(): TraceParent {
    this.own ??= { traceId: this.traceId, spanId: this.spanId, sampled: true, traceState: this.traceState, remote: false };
    return this.own;
  }
}

/** Sampled out: records nothing, but children and upstream requests still see its trace (not sampled). */
export class UnsampledSpan implements HerdSpan {
  readonly recording = false;
  private readonly own: TraceParent;
  constructor(traceId: string, spanId: string, traceState: string | undefined) {
    this.own = { traceId, spanId, sampled: false, traceState, remote: false };
  }
  setAttribute(): void {}
  setAttributes(): void {}
  addEvent(): void {}
  recordError(): void {}
  end(): void {}
  context(): TraceParent {
    return this.own;
  }
}

/** `attributes` without its undefined values, as parallel arrays. */
export function toAttributeList(attributes: Attributes): AttributeList {
  const list: AttributeList = { keys: [], values: [] };
  for (const key in attributes) {
    const value = attributes[key];
    if (value === undefined) continue;
    list.keys.push(key);
    list.values.push(value);
  }
  return list;
}

/** A HerdError's code (low cardinality, as `error.type` wants), else the error's class name; the message without credentials. */
function describeError(error: unknown): { type: string; message: string } {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return { type: typeof code === 'string' ? code : error.name, message: redactText(error.message) };
  }
  return { type: 'Error', message: redactText(String(error)) };
}
