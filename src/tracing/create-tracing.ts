// Tracing as app.ts starts it: the no-op tracer when off; when on, the recording tracer, the bounded
// export queue and the OTLP/HTTP sender, with their drops and exports counted in the herd_tracing_* families.
import { randomUUID } from 'node:crypto';
import type { TracingConfig } from '../config/tracing-config-schema.ts';
import type { TracingMetrics } from '../metrics/tracing-metrics.ts';
import { encodeOtlpTraces, type OtlpResource } from './encode-otlp-traces.ts';
import { NOOP_TRACER } from './noop-tracer.ts';
import { createOtlpHttpSender } from './otlp-http-sender.ts';
import { RecordingTracer } from './recording-tracer.ts';
import { resolveTracingSettings, type TracingSettings } from './resolve-tracing-settings.ts';
import { createSampler } from './sampler.ts';
import { type RetryPolicy, SpanExportQueue } from './span-export-queue.ts';
import type { Tracer } from './tracer.ts';
import { HERD_VERSION } from '../core/herd-version.ts';

export interface Tracing {
  tracer: Tracer;
  /** Whether prompts and answers may be recorded on spans (tracing.capture_content). */
  captureContent: boolean;
  /** Ended spans waiting for export (at most tracing.max_queue_size). */
  queued(): number;
  /** Sends every queued span now (tests, a forced exit). */
  flush(): Promise<void>;
  /** Sends what is queued within `deadlineMs` (default 5 s), then drops the rest (counted); idempotent. */
  close(deadlineMs?: number): Promise<void>;
}

export interface TracingOptions {
  env?: NodeJS.ProcessEnv;
  /** Registers the herd_tracing_* families (registerTracingMetrics), called only when tracing is on; undefined: not counted. */
  metrics?: () => TracingMetrics;
  log?: (line: string) => void;
  /** Retries of one batch; default 5 sends, 1 s doubling to 5 s (OpenTelemetry's exporters' defaults). */
  retry?: RetryPolicy;
}

const DEFAULT_RETRY: RetryPolicy = { attempts: 5, initialBackoffMs: 1000, maxBackoffMs: 5000 };
const OFF: Tracing = Object.freeze({ tracer: NOOP_TRACER, captureContent: false, queued: () => 0, flush: async () => undefined, close: async () => undefined });

export function createTracing(config: TracingConfig, options: TracingOptions = {}): Tracing {
  const log = options.log ?? (() => undefined);
  const settings = resolveTracingSettings(config, options.env ?? process.env, randomUUID());
  for (const warning of settings.warnings) log(`warning: tracing: ${warning}`);
  if (!settings.enabled) return OFF;
  return startTracing(settings, { ...options, log });
}

/** The recording pipeline for resolved settings (benchmarks and tests start it directly). */
export function startTracing(settings: TracingSettings, options: TracingOptions & { log: (line: string) => void }): Tracing {
  const metrics = options.metrics?.();
  const sender = createOtlpHttpSender({ url: settings.url, headers: settings.headers, timeoutMs: settings.exportTimeoutMs });
  const resource: OtlpResource = { attributes: settings.resource, scopeName: 'herd', scopeVersion: HERD_VERSION };
  const queue = new SpanExportQueue({
    encode: (spans) => encodeOtlpTraces(spans, resource),
    send: (body, signal) => sender.send(body, signal),
    maxQueueSize: settings.maxQueueSize,
    maxBatchSize: settings.maxBatchSize,
    scheduleDelayMs: settings.scheduleDelayMs,
    retry: options.retry ?? DEFAULT_RETRY,
    onDropped: (reason, count) => metrics?.spansDropped(reason, count),
    onExported: (count) => metrics?.spansExported(count),
    log: options.log,
  });
  const tracer = new RecordingTracer(createSampler(settings.sampler), (span) => queue.add(span));
  // The URL only: the headers may hold the collector's token.
  options.log(`tracing: exporting spans by OTLP/HTTP to ${new URL(settings.url).origin}${new URL(settings.url).pathname}`);
  let closed: Promise<void> | undefined;
  return {
    tracer,
    captureContent: settings.captureContent,
    queued: () => queue.size,
    flush: () => queue.flush(),
    close(deadlineMs = 5000) {
      closed ??= queue.shutdown(deadlineMs).finally(() => sender.close());
      return closed;
    },
  };
}
