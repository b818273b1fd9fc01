// The tracer when tracing is on: samples each new span, records the sampled ones and hands them, ended,
// to the export queue.
import { nowMs, RecordedSpan, UnsampledSpan } from './recorded-span.ts';
import type { Sampler } from './sampler.ts';
import { newSpanId, newTraceId } from './span-ids.ts';
import { isValidTraceParent } from './trace-parent.ts';
import type { HerdSpan, SpanOptions, Tracer } from './tracer.ts';

export class RecordingTracer implements Tracer {
  readonly enabled = true;

  constructor(
    private readonly sampler: Sampler,
    private readonly onEnd: (span: RecordedSpan) => void,
  ) {}

  startSpan(name: string, options: SpanOptions): HerdSpan {
    const parent = isValidTraceParent(options.parent) ? options.parent : undefined;
    const traceId = parent?.traceId ?? newTraceId();
    const spanId = newSpanId();
    if (!(options.sampled ?? this.sampler(parent, traceId))) return new UnsampledSpan(traceId, spanId, parent?.traceState);
    const span = new RecordedSpan(name, options.kind, traceId, spanId, parent?.spanId, parent?.remote ?? false, parent?.traceState, options.startTime ?? nowMs(), this.onEnd);
    if (options.attributes !== undefined) span.setAttributes(options.attributes);
    return span;
  }
}
