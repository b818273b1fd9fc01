// herd.yaml's `tracing` section: OpenTelemetry traces exported by OTLP/HTTP. Unset keys fall back to the
// standard OTEL_* variables (src/tracing/resolve-tracing-settings.ts); header values holding secrets come from the environment only.
import { z } from 'zod';

const positiveInt = z.number().int().positive();

export const tracingConfigSchema = z
  .strictObject({
    enabled: z
      .boolean()
      .optional()
      .describe(
        'true: export traces; false: never (whatever the environment says). Unset: on when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set or OTEL_TRACES_EXPORTER=otlp. OTEL_SDK_DISABLED=true turns it off in every case',
      ),
    endpoint: z
      .string()
      .regex(/^https?:\/\/[^/]/, 'must be an http:// or https:// URL')
      .optional()
      .describe(
        'the OTLP/HTTP traces URL, path included (e.g. http://collector:4318/v1/traces); unset: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT plus /v1/traces, else http://localhost:4318/v1/traces',
      ),
    headers: z
      .record(z.string().min(1), z.string())
      .default({})
      .describe('headers sent with every export, for values that are not secret (a tenant id); a token goes in the variable headers_env names'),
    headers_env: z
      .string()
      .min(1)
      .optional()
      .describe(
        'name of an environment variable holding more headers as OTEL_EXPORTER_OTLP_HEADERS writes them (Authorization=Bearer%20...,x-key=...); OTEL_EXPORTER_OTLP_HEADERS and OTEL_EXPORTER_OTLP_TRACES_HEADERS are read too',
      ),
    service_name: z.string().min(1).optional().describe("the resource's service.name; unset: OTEL_SERVICE_NAME, else service.name in OTEL_RESOURCE_ATTRIBUTES, else herd"),
    resource_attributes: z
      .record(z.string().min(1), z.string())
      .default({})
      .describe('more resource attributes (deployment.environment.name: prod, …), over those of OTEL_RESOURCE_ATTRIBUTES'),
    sampler_ratio: z
      .number()
      .min(0)
      .max(1)
      .optional()
      .describe(
        'share of new traces recorded (parent-based: a child follows its parent, a request with a traceparent is always recorded); unset: OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG, else 1',
      ),
    capture_content: z.boolean().default(false).describe('record prompts and answers (gen_ai.input.messages, gen_ai.output.messages) on spans; off: lengths and counts only'),
    max_queue_size: positiveInt.default(2048).describe('ended spans waiting for export; more are dropped and counted in herd_tracing_spans_dropped_total{reason="queue_full"}'),
    max_export_batch_size: positiveInt.default(512).describe('spans per export request'),
    schedule_delay_ms: positiveInt.default(5000).describe('longest wait before a partial batch is sent'),
    export_timeout_ms: positiveInt.default(10_000).describe('longest wait for one export request'),
  })
  .superRefine((tracing, ctx) => {
    if (tracing.max_export_batch_size > tracing.max_queue_size) {
      ctx.addIssue({ code: 'custom', path: ['max_export_batch_size'], message: 'must not exceed max_queue_size' });
    }
  });

export type TracingConfig = z.infer<typeof tracingConfigSchema>;
