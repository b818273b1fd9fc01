// The variants tracing-exporter-bench.ts compares, each run in its own process: the no-op tracer (the loop's
// own cost), Herd's tracer and exporter, and the OpenTelemetry JS SDK with its JSON and protobuf serializers.
import { GCProfiler } from 'node:v8';
import { ROOT_CONTEXT, SpanKind as OtelKind, trace, type Tracer as OtelTracer } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
// Not a Herd dependency: the SDK's protobuf serializer, installed with the exporter; measured here only.
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  type ReadableSpan,
  type SpanExporter,
  type SpanProcessor,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import { encodeOtlpTraces, type OtlpResource } from '../../src/tracing/encode-otlp-traces.ts';
import { NOOP_TRACER } from '../../src/tracing/noop-tracer.ts';
import { createOtlpHttpSender } from '../../src/tracing/otlp-http-sender.ts';
import type { RecordedSpan } from '../../src/tracing/recorded-span.ts';
import { RecordingTracer } from '../../src/tracing/recording-tracer.ts';
import { createSampler } from '../../src/tracing/sampler.ts';
import { SpanExportQueue } from '../../src/tracing/span-export-queue.ts';
import { SpanKind, type Tracer } from '../../src/tracing/tracer.ts';

export const VARIANTS = ['noop', 'herd', 'sdk-json', 'sdk-protobuf'] as const;
export type VariantName = (typeof VARIANTS)[number];

export interface VariantResult {
  cpuUsPerSpan: number;
  allocBytesPerSpan: number;
  retainedBytesPerSpan: number;
  encodeBytesPerSpan: number;
  bodyBytesPerSpan: number;
  made: number;
  exported: number;
}

const RESOURCE = { 'service.name': 'herd', 'service.version': '0.1.0', 'service.instance.id': 'a1b2c3', 'telemetry.sdk.language': 'nodejs' };
const SERVER_ATTRS = {
  'http.request.method': 'POST',
  'url.path': '/v1/chat/completions',
  'server.address': '127.0.0.1',
  'server.port': 8000,
  'user_agent.original': 'openai-node/6',
};
const OP_ATTRS = { 'gen_ai.operation.name': 'chat', 'herd.route': 'gpt-4o', 'herd.key.id': 'key_01H' };
const ATTEMPT_ATTRS = {
  'gen_ai.operation.name': 'chat',
  'gen_ai.provider.name': 'openai',
  'gen_ai.request.model': 'gpt-4o',
  'gen_ai.response.model': 'gpt-4o-2024-08-06',
  'gen_ai.response.id': 'chatcmpl-abc123',
  'gen_ai.response.finish_reasons': ['stop'],
  'gen_ai.request.max_tokens': 256,
  'gen_ai.request.temperature': 0.7,
  'gen_ai.request.stream': true,
  'gen_ai.usage.input_tokens': 812,
  'gen_ai.usage.output_tokens': 120,
  'server.address': 'api.openai.com',
  'server.port': 443,
  'herd.attempt': 1,
  'herd.deployment': 'openai/gpt-4o',
};
const SPANS_PER_REQUEST = 3;
const CHUNK = 64;
const BATCH = 512;

/** One gateway-shaped request on Herd's interface. */
function herdRequest(tracer: Tracer): void {
  const root = tracer.startSpan('POST /v1/chat/completions', { kind: SpanKind.SERVER, parent: undefined, attributes: SERVER_ATTRS });
  const op = tracer.startSpan('chat gpt-4o', { kind: SpanKind.INTERNAL, parent: root.context(), attributes: OP_ATTRS });
  const attempt = tracer.startSpan('chat gpt-4o', { kind: SpanKind.CLIENT, parent: op.context(), attributes: ATTEMPT_ATTRS });
  attempt.addEvent('gen_ai.first_chunk');
  attempt.end();
  op.end();
  root.end();
}

/** The same request on the SDK, its context passed explicitly (no context manager), as Herd would. */
function sdkRequest(tracer: OtelTracer): void {
  const root = tracer.startSpan('POST /v1/chat/completions', { kind: OtelKind.SERVER, attributes: SERVER_ATTRS }, ROOT_CONTEXT);
  const op = tracer.startSpan('chat gpt-4o', { kind: OtelKind.INTERNAL, attributes: OP_ATTRS }, trace.setSpan(ROOT_CONTEXT, root));
  const attempt = tracer.startSpan('chat gpt-4o', { kind: OtelKind.CLIENT, attributes: ATTEMPT_ATTRS }, trace.setSpan(ROOT_CONTEXT, op));
  attempt.addEvent('gen_ai.first_chunk');
  attempt.end();
  op.end();
  root.end();
}

interface Pipeline {
  request(): void;
  flush(): Promise<void>;
  exported(): number;
}

function herdPipeline(sink: string): Pipeline {
  const sender = createOtlpHttpSender({ url: sink, headers: {}, timeoutMs: 10_000 });
  const resource: OtlpResource = { attributes: RESOURCE, scopeName: 'herd', scopeVersion: '0.1.0' };
  let exported = 0;
  const queue = new SpanExportQueue({
    encode: (spans) => encodeOtlpTraces(spans, resource),
    send: (body, signal) => sender.send(body, signal),
    maxQueueSize: 1 << 20,
    maxBatchSize: BATCH,
    scheduleDelayMs: 5000,
    retry: { attempts: 1, initialBackoffMs: 1, maxBackoffMs: 1 },
    onDropped: () => undefined,
    onExported: (n) => (exported += n),
    log: () => undefined,
  });
  const tracer = new RecordingTracer(createSampler({ ratio: 1, parentBased: true }), (span) => queue.add(span));
  return { request: () => herdRequest(tracer), flush: () => queue.flush(), exported: () => exported };
}

/** An SDK exporter on the SDK's protobuf serializer and Herd's HTTP sender. */
function protobufExporter(sink: string): SpanExporter {
  const sender = createOtlpHttpSender({ url: sink, headers: {}, timeoutMs: 10_000 });
  return {
    export(spans: ReadableSpan[], done: (result: ExportResult) => void) {
      const body = ProtobufTraceSerializer.serializeRequest(spans) as Uint8Array;
      void sender.send(body).then((r) => done({ code: r.ok ? ExportResultCode.SUCCESS : ExportResultCode.FAILED }));
    },
    shutdown: () => sender.close(),
  };
}

function sdkPipeline(exporter: SpanExporter): Pipeline {
  let exported = 0;
  const counting: SpanExporter = {
    export(spans, done) {
      exporter.export(spans, (result) => {
        if (result.code === ExportResultCode.SUCCESS) exported += spans.length;
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
  };
  const processor = new BatchSpanProcessor(counting, { maxQueueSize: 1 << 20, maxExportBatchSize: BATCH, scheduledDelayMillis: 5000 });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes(RESOURCE),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(1) }),
    spanProcessors: [processor],
  });
  const tracer = provider.getTracer('herd', '0.1.0');
  return { request: () => sdkRequest(tracer), flush: () => processor.forceFlush(), exported: () => exported };
}

function pipelineOf(variant: VariantName, sink: string): Pipeline {
  if (variant === 'noop') return { request: () => herdRequest(NOOP_TRACER), flush: async () => undefined, exported: () => 0 };
  if (variant === 'herd') return herdPipeline(sink);
  if (variant === 'sdk-json') return sdkPipeline(new OTLPTraceExporter({ url: sink }));
  return sdkPipeline(protobufExporter(sink));
}

async function runRequests(pipeline: Pipeline, count: number): Promise<void> {
  for (let i = 0; i < count; i += CHUNK) {
    for (let j = 0; j < CHUNK && i + j < count; j++) pipeline.request();
    await new Promise((resolve) => setImmediate(resolve));
  }
  await pipeline.flush();
}

export async function runVariant(variant: VariantName, sink: string, requests: number): Promise<VariantResult> {
  const pipeline = pipelineOf(variant, sink);
  await runRequests(pipeline, 2000); // warm up: compiled code, keep-alive sockets
  const warmExported = pipeline.exported();
  const before = process.cpuUsage();
  await runRequests(pipeline, requests);
  const cpu = process.cpuUsage(before);
  const made = requests * SPANS_PER_REQUEST;
  const probes = probeAllocation(variant);
  return { cpuUsPerSpan: (cpu.user + cpu.system) / made, ...probes, made, exported: pipeline.exported() - warmExported };
}

const gc = () => (globalThis as { gc?: () => void }).gc?.();
const heap = () => {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

/** Bytes per span to make and end spans, kept after a collection, and to encode them; asserts no collection ran while counting. */
function probeAllocation(variant: VariantName): Omit<VariantResult, 'cpuUsPerSpan' | 'made' | 'exported'> {
  const requests = 2000;
  const spans = requests * SPANS_PER_REQUEST;
  const held: unknown[] = [];
  let make: () => void;
  let encode: (batch: unknown[]) => Uint8Array;
  if (variant === 'noop' || variant === 'herd') {
    const tracer = variant === 'noop' ? NOOP_TRACER : new RecordingTracer(createSampler({ ratio: 1, parentBased: true }), (s) => held.push(s));
    make = () => herdRequest(tracer);
    const resource: OtlpResource = { attributes: RESOURCE, scopeName: 'herd', scopeVersion: '0.1.0' };
    encode = (batch) => encodeOtlpTraces(batch as RecordedSpan[], resource);
  } else {
    const keep: SpanProcessor = { onStart: () => undefined, onEnd: (s) => void held.push(s), forceFlush: async () => undefined, shutdown: async () => undefined };
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes(RESOURCE),
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(1) }),
      spanProcessors: [keep],
    });
    const tracer = provider.getTracer('herd', '0.1.0');
    make = () => sdkRequest(tracer);
    const serializer = variant === 'sdk-json' ? JsonTraceSerializer : ProtobufTraceSerializer;
    encode = (batch) => serializer.serializeRequest(batch as ReadableSpan[]) as Uint8Array;
  }
  for (let i = 0; i < 200; i++) make();
  held.length = 0;
  gc();
  const profiler = new GCProfiler();
  profiler.start();
  const h0 = heap();
  for (let i = 0; i < requests; i++) make();
  const h1 = heap();
  const collections = profiler.stop()?.statistics.length ?? 0;
  if (collections > 0) throw new Error(`${variant}: a collection ran while counting allocation`);
  gc();
  const h2 = heap();
  let encodeBytes = 0;
  let bodyBytes = 0;
  if (held.length > 0) {
    const batches = Math.floor(held.length / BATCH);
    for (let b = 0; b < batches; b++) encode(held.slice(b * BATCH, (b + 1) * BATCH)); // warm up
    gc();
    const p = new GCProfiler();
    p.start();
    const e0 = heap();
    for (let b = 0; b < batches; b++) bodyBytes += encode(held.slice(b * BATCH, (b + 1) * BATCH)).length;
    encodeBytes = heap() - e0;
    if ((p.stop()?.statistics.length ?? 0) > 0) throw new Error(`${variant}: a collection ran while counting encoding`);
    encodeBytes /= batches * BATCH;
    bodyBytes /= batches * BATCH;
  }
  return {
    allocBytesPerSpan: Math.round((h1 - h0) / spans),
    retainedBytesPerSpan: Math.round((h2 - h0) / spans),
    encodeBytesPerSpan: Math.round(encodeBytes),
    bodyBytesPerSpan: Math.round(bodyBytes),
  };
}
