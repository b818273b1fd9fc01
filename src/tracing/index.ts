// The tracing layer's surface for the rest of Herd: the interface, W3C propagation, redaction and start-up.
export { createTracing, type Tracing, type TracingOptions } from './create-tracing.ts';
export { NOOP_TRACER } from './noop-tracer.ts';
export { REDACTED, redactHeaderValue, redactText, redactUrl } from './redact.ts';
export {
  extractFromHeaders,
  extractTraceParent,
  formatTraceParent,
  inject,
  isValidTraceParent,
  NO_TRACE_PARENT,
  parseTraceParent,
  parseTraceState,
  type TraceParent,
} from './trace-parent.ts';
export { type Attributes, type AttributeValue, type HerdSpan, SpanKind, type SpanOptions, type Tracer } from './tracer.ts';
