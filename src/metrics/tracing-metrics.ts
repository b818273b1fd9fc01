// The tracing exporter's own families: spans sent to the collector and spans dropped, by reason, so a
// collector that is down or slow shows on /metrics rather than as a request slowed or memory grown.
import { Counter, type Registry } from 'prom-client';

export const SPAN_DROP_REASONS = ['queue_full', 'export_failed', 'shutdown'] as const;
export type SpanDropReason = (typeof SPAN_DROP_REASONS)[number];

export interface TracingMetrics {
  spansDropped(reason: SpanDropReason, count: number): void;
  spansExported(count: number): void;
}

export function registerTracingMetrics(registry: Registry): TracingMetrics {
  const dropped = new Counter({
    name: 'herd_tracing_spans_dropped_total',
    help: 'Spans not exported: queue_full (the export queue was at its bound), export_failed (the collector refused or was unreachable after retries), shutdown (queued or being sent when the exit deadline passed, or ended after it)',
    labelNames: ['reason'],
    registers: [registry],
  });
  // Every reason from the first scrape, so a rate() over it never starts from a missing series.
  for (const reason of SPAN_DROP_REASONS) dropped.inc({ reason }, 0);
  const exported = new Counter({ name: 'herd_tracing_spans_exported_total', help: 'Spans the OTLP collector accepted', registers: [registry] });
  return {
    spansDropped: (reason, count) => dropped.inc({ reason }, count),
    spansExported: (count) => exported.inc(count),
  };
}
