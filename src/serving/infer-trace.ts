// One traced inference as Triton's tracer.cc records it: in OpenTelemetry mode the spans InferRequest (SERVER) →
// a span named after the model → `compute`, with Triton's timestamps as events; in Triton mode the same timestamps as trace-file records.
import type { Tensor } from '../core/tensor.ts';
import { type HerdSpan, SpanKind, type TraceParent, type Tracer } from '../tracing/index.ts';
import { ResponseStamps, TRACED_TENSOR_LIMIT, tensorEventAttributes } from './trace-responses.ts';
import type { SampledTrace, TraceSettings } from './trace-settings.ts';
import { formatTraceTensor } from './trace-tensor.ts';
import type { TritonTraceRecord, TritonTraceTensor, TritonTraceTimestamp } from './triton-trace-file.ts';

/** Triton's timestamps (TRITONSERVER_InferenceTraceActivity names) Herd records. */
export type TritonActivity = 'REQUEST_START' | 'QUEUE_START' | 'COMPUTE_START' | 'COMPUTE_INPUT_END' | 'COMPUTE_OUTPUT_START' | 'COMPUTE_END' | 'REQUEST_END';

/** The frontends' timestamps (Triton's CaptureTimestamp names): trace_summary.py reads a request by them. */
export type FrontendActivity =
  | 'HTTP_RECV_START'
  | 'HTTP_RECV_END'
  | 'HTTP_SEND_START'
  | 'HTTP_SEND_END'
  | 'GRPC_WAITREAD_START'
  | 'GRPC_WAITREAD_END'
  | 'GRPC_SEND_START'
  | 'GRPC_SEND_END'
  | 'INFER_RESPONSE_COMPLETE';

/** Where a model's trace hangs: a transport's InferRequest, an ensemble's step, a BLS call. InferCall.trace carries it. */
export interface InferTraceParent {
  startModel(modelName: string, modelVersion: number, requestId: string): ModelTrace;
}

/** What the transports need to trace inferences: Triton's settings (which requests, which mode) and the tracer. */
export interface ServingTracing {
  settings: TraceSettings;
  tracer: Tracer;
}

/**
 * The trace of a client's request to `modelName` when its setting samples it (a request carrying a valid
 * traceparent always is, in OpenTelemetry mode); undefined otherwise, at the cost of a counter.
 */
export function startInferTrace(
  tracing: ServingTracing | undefined,
  modelName: string,
  parent: TraceParent | undefined,
  /** Monotonic ms when the request began arriving, if before now (its InferRequest span starts there). */
  startMs?: number,
): InferTrace | undefined {
  if (tracing === undefined) return undefined;
  const sampled = tracing.settings.sample(modelName, parent === undefined ? NOT_PROPAGATED : PROPAGATED);
  return sampled === undefined ? undefined : new InferTrace(sampled, tracing, parent, startMs);
}

// Shared: sampling a request allocates nothing.
const PROPAGATED = Object.freeze({ propagated: true });
const NOT_PROPAGATED = Object.freeze({ propagated: false });

/** A traced request's failure → `request <id>, trace <trace id>`; weak, so an error's tag goes with it. */
const FAILURE_IDS = new WeakMap<object, string>();

/**
 * A log line about a failure, with the traced request's ids after its first word group when `markFailure` tagged it:
 * `internal error (request sc-1, trace 5b8e…): …`. Untraced failures' lines are unchanged.
 */
export function withTraceIds(line: string, error: unknown): string {
  const ids = typeof error === 'object' && error !== null ? FAILURE_IDS.get(error) : undefined;
  if (ids === undefined) return line;
  const colon = line.indexOf(': ');
  return colon < 0 ? `${line} (${ids})` : `${line.slice(0, colon)} (${ids})${line.slice(colon)}`;
}

/** Monotonic milliseconds: the trace file's nanoseconds and, offset by the time origin, the spans' epoch times. */
const now = () => performance.now();
const epochMs = (ms: number) => performance.timeOrigin + ms;
const ns = (ms: number) => Math.round(ms * 1e6);

/** The traced client request: its InferRequest span (OpenTelemetry) or the records its trace file entry gathers (Triton). */
export class InferTrace implements InferTraceParent {
  /** Triton mode: every model trace's record, the request's first. */
  readonly records: TritonTraceRecord[] | undefined;
  /** Triton mode: the request's own trace id's timestamps, the frontend's first (before its model header, as Triton writes them). */
  private readonly frontend: TritonTraceTimestamp[] | undefined;
  private readonly span: HerdSpan | undefined;
  private started = false;
  /** The client's request id (the KServe `id`), once the request's model started. */
  private requestId = '';
  /** The level's parts: Triton records timestamps only with TIMESTAMPS, tensors only with TENSORS. */
  readonly stamps: boolean;
  readonly tensors: boolean;
  private readonly responses = new ResponseStamps();
  /** A failure a response carried (generate_stream's later errors): InferRequest's status when it ends. */
  private failure: unknown;

  readonly tracer: Tracer;

  constructor(
    readonly sampled: SampledTrace,
    private readonly tracing: ServingTracing,
    parent: TraceParent | undefined,
    startMs: number = now(),
  ) {
    this.tracer = tracing.tracer;
    this.stamps = sampled.levels.includes('TIMESTAMPS');
    this.tensors = sampled.levels.includes('TENSORS');
    if (sampled.mode === 'triton') {
      this.records = [];
      this.frontend = [];
    } else this.span = this.tracer.startSpan('InferRequest', { kind: SpanKind.SERVER, parent, sampled: true, startTime: epochMs(startMs) });
  }

  /** The request's own model: Triton's trace id of the sample, no parent id. */
  startModel(modelName: string, modelVersion: number, requestId: string): ModelTrace {
    // A second model under the same request (never from a transport) takes an id of its own.
    const first = !this.started;
    this.started = true;
    if (first) this.requestId = requestId;
    return new ModelTrace(this, first ? this.sampled.id : this.nextId(), 0, this.span?.context(), modelName, modelVersion, requestId, first ? this.frontend : undefined);
  }

  /** A frontend timestamp: an event on InferRequest, or one of the request's own trace id in the file. */
  capture(activity: FrontendActivity, t: number = now()): void {
    if (!this.stamps) return;
    // A response stamp held back (past the bound) is written before whatever follows it.
    const held = this.responses.flush();
    if (held >= 0) this.stamp('INFER_RESPONSE_COMPLETE', held);
    this.stamp(activity, t);
  }

  /**
   * A response reached the frontend (Triton's INFER_RESPONSE_COMPLETE): every response of a generate_stream, the
   * first of a gRPC stream's request, an infer's one. Past TRACED_RESPONSE_LIMIT only the last is stamped.
   */
  responseComplete(t: number = now()): void {
    if (this.stamps && this.responses.take(t)) this.stamp('INFER_RESPONSE_COMPLETE', t);
  }

  private stamp(activity: FrontendActivity, t: number): void {
    if (this.frontend) this.frontend.push({ name: activity, ns: ns(t) });
    else this.span?.addEvent(activity, undefined, epochMs(t));
  }

  /**
   * Tags a failure with this request's ids, so the transport's one error log line names them (`withTraceIds`),
   * as the gateway's lines do: a log line leads to the trace.
   */
  markFailure(error: unknown): void {
    if (typeof error !== 'object' || error === null) return;
    const ids = [this.requestId === '' ? '' : `request ${this.requestId}`, this.span ? `trace ${this.span.context().traceId}` : ''].filter((s) => s !== '');
    if (ids.length > 0) FAILURE_IDS.set(error, ids.join(', '));
  }

  /** A failure inside an answer that is still sent (a stream's error event): the first one becomes InferRequest's status. */
  fail(error: unknown): void {
    this.failure ??= error;
  }

  nextId(): number {
    return this.tracing.settings.nextTraceId();
  }

  /** After the answer was sent (or refused): the InferRequest span ends, the Triton records go to the trace file. */
  end(error: unknown = this.failure): void {
    const held = this.responses.flush();
    if (held >= 0 && this.stamps) this.stamp('INFER_RESPONSE_COMPLETE', held);
    if (error !== undefined) this.markFailure(error);
    if (this.span) {
      if (error !== undefined) this.span.recordError(error);
      this.span.end();
    }
    // A request refused before its model started has no record to write (Triton writes none either).
    if (this.records && this.records.length > 0) this.sampled.finish(this.records);
  }
}

/** A response as its trace reads it (an InferenceResult). */
export type TracedResult = { ok: true; outputs: readonly Tensor[] } | { ok: false; error: unknown };

/**
 * One model's part of a traced request (Triton's trace id): its model span and compute span, or its record.
 * REQUEST_START, QUEUE_START and REQUEST_END go on the model span, COMPUTE_* on the compute span, as in tracer.cc.
 */
export class ModelTrace {
  private readonly modelSpan: HerdSpan | undefined;
  private computeSpan: HerdSpan | undefined;
  private readonly timestamps: TritonTraceTimestamp[] | undefined;
  private readonly record: TritonTraceRecord | undefined;
  /** A decoupled model's responses (OpenTelemetry mode: RESPONSE_SEND events), counted whatever the bound. */
  private readonly responses = new ResponseStamps();
  /** Whether the latest response was the final one (for the held last RESPONSE_SEND). */
  private lastFinal = false;
  private tensorCount = 0;
  private failure: unknown;

  constructor(
    private readonly root: InferTrace,
    readonly id: number,
    parentId: number,
    parent: TraceParent | undefined,
    modelName: string,
    modelVersion: number,
    requestId: string,
    /** The request's own model: the frontend's timestamps come first under the same id. */
    timestamps?: TritonTraceTimestamp[],
  ) {
    const t = now();
    if (root.records) {
      this.timestamps = timestamps ?? [];
      const record: TritonTraceRecord = { id, model_name: modelName, model_version: modelVersion, timestamps: this.timestamps };
      if (requestId !== '') record.request_id = requestId;
      if (parentId !== 0) record.parent_id = parentId;
      root.records.push(record);
      this.record = record;
    } else {
      this.modelSpan = root.tracer.startSpan(modelName, {
        kind: SpanKind.INTERNAL,
        parent,
        sampled: true,
        startTime: epochMs(t),
        attributes: {
          'triton.model_name': modelName,
          'triton.model_version': modelVersion,
          'triton.trace_id': id,
          'triton.trace_parent_id': parentId,
          'triton.request_id': requestId === '' ? undefined : requestId,
        },
      });
    }
    this.mark('REQUEST_START', t);
  }

  /** A Triton timestamp at `t` (monotonic ms, default now); none unless the level has TIMESTAMPS. */
  mark(activity: TritonActivity, t: number = now()): void {
    if (!this.root.stamps) return;
    if (this.timestamps) this.timestamps.push({ name: activity, ns: ns(t) });
    else (this.computeSpan ?? this.modelSpan)?.addEvent(activity, undefined, epochMs(t));
  }

  /** Whether the level records tensors (submitTraced skips reading outputs when not). */
  get tensors(): boolean {
    return this.root.tensors;
  }

  /**
   * One response of a decoupled model, as its backend sends it: a RESPONSE_SEND event on the model span (the
   * first TRACED_RESPONSE_LIMIT, then the last), its outputs with TENSORS, its failure kept for REQUEST_END.
   */
  response(result: TracedResult, final: boolean): void {
    const t = now();
    if (!result.ok) this.failure ??= result.error;
    this.lastFinal = final;
    const stamped = this.responses.take(t);
    if (stamped && this.modelSpan && this.root.stamps) this.modelSpan.addEvent('RESPONSE_SEND', final ? FINAL : undefined, epochMs(t));
    if (stamped && result.ok) this.recordTensors('TENSOR_BACKEND_OUTPUT', result.outputs);
  }

  /** Execution begins: the compute span (a child of the model span) with the executed batch's size. */
  computeStart(batchSize: number, t: number = now()): void {
    if (this.modelSpan) {
      this.computeSpan = this.root.tracer.startSpan('compute', {
        kind: SpanKind.INTERNAL,
        parent: this.modelSpan.context(),
        sampled: true,
        startTime: epochMs(t),
        attributes: { 'triton.batch_size': batchSize },
      });
    }
    this.mark('COMPUTE_START', t);
  }

  /** Execution ended: COMPUTE_INPUT_END and COMPUTE_OUTPUT_START where the backend marked them, then COMPUTE_END. */
  computeEnd(inputEnd: number, outputStart: number, end: number): void {
    this.mark('COMPUTE_INPUT_END', inputEnd);
    this.mark('COMPUTE_OUTPUT_START', outputStart);
    this.mark('COMPUTE_END', end);
    this.computeSpan?.end(epochMs(end));
    this.computeSpan = undefined;
  }

  /**
   * The context a backend hands on while it computes (an llm step's ChatPort call, a BLS call): the compute
   * span's, else the model span's (an ensemble); undefined in Triton mode.
   */
  context(): TraceParent | undefined {
    return (this.computeSpan ?? this.modelSpan)?.context();
  }

  /** Where a request this model makes hangs (an ensemble step, a BLS call): its own trace id, this one as parent. */
  child(): InferTraceParent {
    return {
      startModel: (modelName, modelVersion, requestId) => new ModelTrace(this.root, this.root.nextId(), this.id, this.context(), modelName, modelVersion, requestId),
    };
  }

  /**
   * REQUEST_END: for a decoupled model once its final response went out, so the model span covers the stream.
   * A failure (given, or one a response carried) is recorded on the model span.
   */
  end(error: unknown = this.failure): void {
    const held = this.responses.flush();
    if (held >= 0 && this.modelSpan && this.root.stamps) this.modelSpan.addEvent('RESPONSE_SEND', this.lastFinal ? FINAL : undefined, epochMs(held));
    this.mark('REQUEST_END');
    if (!this.modelSpan) return;
    if (this.responses.count > 0) this.modelSpan.setAttribute('triton.response_count', this.responses.count);
    if (this.tensorCount > TRACED_TENSOR_LIMIT) this.modelSpan.setAttribute('triton.tensors_dropped', this.tensorCount - TRACED_TENSOR_LIMIT);
    if (error !== undefined) this.modelSpan.recordError(error);
    this.modelSpan.end();
  }

  /** Level TENSORS: each tensor to the record (Triton mode) or as an event on the model span, up to TRACED_TENSOR_LIMIT. */
  recordTensors(activity: TritonTraceTensor['activity'], tensors: readonly Tensor[]): void {
    if (!this.root.tensors) return;
    for (const tensor of tensors) {
      this.tensorCount += 1;
      if (this.tensorCount > TRACED_TENSOR_LIMIT) continue;
      const traced = formatTraceTensor(activity, tensor);
      if (this.record) (this.record.tensors ??= []).push(traced);
      // On the model span whichever span is open, so a model's tensors are found in one place.
      else this.modelSpan?.addEvent(activity, tensorEventAttributes(traced));
    }
  }
}

/** The attributes of the last response's RESPONSE_SEND event. */
const FINAL = Object.freeze({ 'triton.response.final': true });
