// Triton's `--trace-config mode=opentelemetry` (herd.yaml serving.trace) turns the tracer on as tritonserver's does,
// exporting to its `opentelemetry,url` with its `resource` and `bsp_*` settings, where herd.yaml's `tracing` section leaves them unset.
import type { ServingTraceConfig } from '../config/serving-trace-config-schema.ts';
import type { TracingConfig } from '../config/tracing-config-schema.ts';

/** The tracing section the tracer is made from: `tracing` itself, or with OpenTelemetry mode's settings under it. */
export function mergeTritonTraceConfig(tracing: TracingConfig, trace: ServingTraceConfig): TracingConfig {
  // tracing.enabled: false keeps it off, as it does for the OTEL_* variables.
  if (trace.mode !== 'opentelemetry' || tracing.enabled === false) return tracing;
  const otel = trace.opentelemetry;
  const merged: TracingConfig = { ...tracing, enabled: true, resource_attributes: { ...otel.resource, ...tracing.resource_attributes } };
  // Triton's examples write the URL without a scheme (localhost:4318/v1/traces), which its exporter reads as http.
  if (merged.endpoint === undefined && otel.url !== undefined) merged.endpoint = /^https?:\/\//.test(otel.url) ? otel.url : `http://${otel.url}`;
  // Zero is a valid uint32 for Triton; the exporter needs at least one.
  if (otel.bsp_max_queue_size !== undefined) merged.max_queue_size = Math.max(1, otel.bsp_max_queue_size);
  if (otel.bsp_schedule_delay !== undefined) merged.schedule_delay_ms = Math.max(1, otel.bsp_schedule_delay);
  if (otel.bsp_max_export_batch_size !== undefined) merged.max_export_batch_size = Math.max(1, otel.bsp_max_export_batch_size);
  merged.max_export_batch_size = Math.min(merged.max_export_batch_size, merged.max_queue_size);
  return merged;
}
