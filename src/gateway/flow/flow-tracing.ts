// What the gateway flow traces with: the tracer and whether content may be recorded; the no-op pair when off.
import { NOOP_TRACER, type Tracer } from '../../tracing/index.ts';

export interface FlowTracing {
  tracer: Tracer;
  /** tracing.capture_content. */
  captureContent: boolean;
}

export const NO_FLOW_TRACING: FlowTracing = { tracer: NOOP_TRACER, captureContent: false };
