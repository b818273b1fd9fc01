// The tracer when tracing is off: one frozen span for every call, so a traced code path costs a call and
// allocates nothing (test/tracing/noop-tracer.test.ts counts the collections).
import { NO_TRACE_PARENT, type TraceParent } from './trace-parent.ts';
import type { HerdSpan, Tracer } from './tracer.ts';

const NOOP_SPAN: HerdSpan = Object.freeze({
  recording: false,
  setAttribute() {},
  setAttributes() {},
  addEvent() {},
  recordError() {},
  end() {},
  context: (): TraceParent => NO_TRACE_PARENT,
});

export const NOOP_TRACER: Tracer = Object.freeze({ enabled: false, startSpan: () => NOOP_SPAN });
