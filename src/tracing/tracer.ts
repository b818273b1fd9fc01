// Herd's own tracing interface: what serving, the gateway and the transports call. Nothing here names
// OpenTelemetry's packages; the context is an explicit TraceParent handed down by callers, never ambient.
import type { TraceParent } from './trace-parent.ts';

/** OTLP's span kinds, numbered as opentelemetry/proto/trace/v1/trace.proto numbers them. */
export const SpanKind = { INTERNAL: 1, SERVER: 2, CLIENT: 3, PRODUCER: 4, CONSUMER: 5 } as const;
export type SpanKind = (typeof SpanKind)[keyof typeof SpanKind];

export type AttributeValue = string | number | boolean | readonly string[] | readonly number[] | readonly boolean[];
export type Attributes = Readonly<Record<string, AttributeValue | undefined>>;

export interface SpanOptions {
  kind: SpanKind;
  /** The caller's span context (span.context()), or one parsed from a request's traceparent; undefined: a root. */
  parent: TraceParent | undefined;
  attributes?: Attributes;
  /** Epoch milliseconds (fractions allowed), when the work began before the span was started; default now. */
  startTime?: number;
  /**
   * The caller's own sampling decision, over the configured sampler: Triton's `--trace-config rate/count` for an
   * InferRequest (src/serving/trace-sampler.ts). Unset: the parent-based ratio decides.
   */
  sampled?: boolean;
}

export interface HerdSpan {
  /** False for the no-op and unsampled spans: skip building attributes nobody records. */
  readonly recording: boolean;
  setAttribute(key: string, value: AttributeValue | undefined): void;
  setAttributes(attributes: Attributes): void;
  /** `time` in epoch milliseconds, default now. */
  addEvent(name: string, attributes?: Attributes, time?: number): void;
  /** Status ERROR, `error.type` (a HerdError's code, else the error's name) and an `exception` event, no stack. */
  recordError(error: unknown): void;
  /** Once; later calls do nothing. */
  end(time?: number): void;
  /** This span as a parent for children and for the traceparent sent upstream. */
  context(): TraceParent;
}

export interface Tracer {
  /** False when tracing is off: callers may skip work that only feeds spans. */
  readonly enabled: boolean;
  startSpan(name: string, options: SpanOptions): HerdSpan;
}
