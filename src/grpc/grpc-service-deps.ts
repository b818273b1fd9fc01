// What the gRPC services are built from (the serving side's pieces, readiness, logging, stream tracking):
// its own module so the unary service and the stream handler share it without importing each other.
import type { ApiGroupGuard } from '../core/api-groups.ts';
import type { ChatCallerGate } from '../core/chat-port.ts';
import type { InferenceService } from '../serving/inference-service.ts';
import type { LogSettings } from '../serving/log-settings.ts';
import type { ModelRepositoryManager } from '../serving/repository/model-repository-manager.ts';
import type { SystemSharedMemoryRegistry } from '../serving/shared-memory/system-shared-memory-registry.ts';
import type { TraceSettings } from '../serving/trace-settings.ts';
import { type InferTrace, startInferTrace, type ServingTracing } from '../serving/infer-trace.ts';
import { extractTraceParent, NOOP_TRACER, type TraceParent, type Tracer } from '../tracing/index.ts';
import type { CallMetadata } from './grpc-call-metadata.ts';

export interface GrpcServiceDeps {
  inference: InferenceService;
  repository: ModelRepositoryManager;
  sharedMemory: SystemSharedMemoryRegistry;
  traceSettings: TraceSettings;
  /** Spans of traced inferences in OpenTelemetry mode; absent: the no-op tracer (Triton mode's trace file still works). */
  tracer?: Tracer | undefined;
  logSettings: LogSettings;
  /** Server readiness (strict readiness and shutdown folded in by the caller). */
  isReady: () => boolean;
  serverId: string;
  log?: (line: string) => void;
  /** Admits callers of models that spend (an llm model, an ensemble with one); absent: no gateway, nothing spends. */
  callers?: ChatCallerGate | undefined;
  /** Who may call each Triton API group; absent: every group open. */
  apiGuard?: ApiGroupGuard | undefined;
  /** Open streams register here so shutdown can drain them. */
  trackStream: (stream: TrackedStream) => void;
}

/** An open ModelStreamInfer call as shutdown sees it. */
export interface TrackedStream {
  /** Answer what was received, refuse the rest, end the stream. */
  drain(): void;
  /** Settles when the stream has ended, however it ended. */
  done: Promise<void>;
}

/** The trace settings and tracer the infer RPCs trace with. */
export function servingTracingOf(deps: Pick<GrpcServiceDeps, 'traceSettings' | 'tracer'>): ServingTracing {
  return { settings: deps.traceSettings, tracer: deps.tracer ?? NOOP_TRACER };
}

/** The trace of a gRPC infer when its model's setting samples it; its parent is the call's traceparent/tracestate metadata. */
export function startGrpcInferTrace(tracing: ServingTracing, modelName: string, metadata: CallMetadata): InferTrace | undefined {
  // Triton reads the context in OpenTelemetry mode only; metadata.get() makes an array, so Triton mode skips it.
  const parent = tracing.settings.mode === 'opentelemetry' ? readTraceParent(metadata) : undefined;
  const trace = startInferTrace(tracing, modelName, parent);
  // The message is in hand when the handler runs: the wait for it ends now.
  trace?.capture('GRPC_WAITREAD_START');
  trace?.capture('GRPC_WAITREAD_END');
  return trace;
}

/** The response is handed to gRPC: GRPC_SEND_START and _END, then the trace ends (a failure recorded on InferRequest). */
export function endGrpcTrace(trace: InferTrace, error?: unknown): void {
  trace.capture('GRPC_SEND_START');
  trace.capture('GRPC_SEND_END');
  trace.end(error);
}

function readTraceParent(metadata: CallMetadata): TraceParent | undefined {
  const traceparent = metadata.get('traceparent');
  return traceparent.length === 0 ? undefined : extractTraceParent(traceparent.map(String), metadata.get('tracestate').map(String));
}
