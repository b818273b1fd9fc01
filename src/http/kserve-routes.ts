// KServe v2 / Triton HTTP routes. Thin: decode the wire format, call serving, encode the answer.
import type { LogSettings } from '../serving/log-settings.ts';
import type { TraceSettings } from '../serving/trace-settings.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HerdError } from '../core/errors.ts';
import type { InferenceService } from '../serving/inference-service.ts';
import type { ModelRepositoryManager } from '../serving/repository/model-repository-manager.ts';
import type { SystemSharedMemoryRegistry } from '../serving/shared-memory/system-shared-memory-registry.ts';
import { convertModelConfigToJson } from '../serving/model-config/convert-model-config-to-json.ts';
import { readJsonLoadParameters } from '../serving/repository/load-parameters.ts';
import { createServerMetadata } from '../serving/server-metadata.ts';
import { endHttpTrace, parseVersion, resolveInferModel, runInferExchange, startHttpInferTrace } from './kserve-infer-exchange.ts';
import { NOOP_TRACER, type Tracer } from '../tracing/index.ts';
import type { ServingTracing } from '../serving/infer-trace.ts';
import { admitKserveCaller, type CallerGate } from './kserve-caller.ts';
import { sendJson } from './send-body.ts';
import { ClientGoneSignal } from './client-gone-signal.ts';

export interface KserveDeps {
  inference: InferenceService;
  repository: ModelRepositoryManager;
  /** System shared memory regions (the registry gRPC shares). */
  sharedMemory: SystemSharedMemoryRegistry;
  /** Server readiness (strict readiness and shutdown folded in by the caller). */
  isReady: () => boolean;
  /** Draining or closing: readiness answers 503 `Server exiting`, as tritonserver's does while it exits. */
  isExiting?: () => boolean;
  /** Server id answered by GET /v2. */
  serverId: string;
  /** The trace and log settings (the stores gRPC's TraceSetting and LogSettings share). */
  traceSettings: TraceSettings;
  logSettings: LogSettings;
  /** Admits callers of models that spend (an llm model, an ensemble with one); absent: no gateway, nothing spends. */
  callers?: CallerGate | undefined;
  /** Spans of traced inferences in OpenTelemetry mode; absent: the no-op tracer (Triton mode's trace file still works). */
  tracer?: Tracer | undefined;
}

type ModelParams = { model: string; version?: string; region?: string };

const HEADER_LENGTH = 'inference-header-content-length';

export function registerKserveRoutes(app: FastifyInstance, deps: KserveDeps, allow: (url: string, methods: string[]) => void): void {
  const { inference, repository } = deps;
  const serverMetadata = createServerMetadata(deps.serverId);

  const get = (url: string, handler: (req: FastifyRequest<{ Params: ModelParams }>, reply: FastifyReply) => unknown) => {
    app.get<{ Params: ModelParams }>(url, handler);
    allow(url, ['GET', 'HEAD']);
  };
  const post = (url: string, handler: (req: FastifyRequest<{ Params: ModelParams }>, reply: FastifyReply) => unknown) => {
    app.post<{ Params: ModelParams }>(url, handler);
    allow(url, ['POST']);
  };
  const both = (url: string, handler: Parameters<typeof get>[1]) => {
    get(url, handler);
    get(`${url.replace('/:model', '/:model/versions/:version')}`, handler);
  };

  get('/v2/health/live', (_req, reply) => reply.code(200).send());
  // Triton's codes: 400 while a model that should be loaded is not, 503 with its error once the server is exiting.
  get('/v2/health/ready', (_req, reply) => {
    if (deps.isExiting?.() === true) return sendJson(reply, 503, { error: 'Server exiting' });
    return reply.code(deps.isReady() ? 200 : 400).send();
  });
  get('/v2', (_req, reply) => sendJson(reply, 200, serverMetadata));

  both('/v2/models/:model', (req, reply) => sendJson(reply, 200, inference.metadata(req.params.model, parseVersion(req.params.version))));
  // Not ready answers as Triton's HandleModelReady does: the lookup's own error (400 unknown, 404 nothing loaded, 503 not ready).
  both('/v2/models/:model/ready', (req, reply) => {
    inference.requireModelReady(req.params.model, parseVersion(req.params.version));
    return reply.code(200).send();
  });
  both('/v2/models/:model/config', (req, reply) => sendJson(reply, 200, convertModelConfigToJson(inference.config(req.params.model, parseVersion(req.params.version)))));
  get('/v2/models/stats', (_req, reply) => sendJson(reply, 200, { model_stats: inference.statistics() }));
  both('/v2/models/:model/stats', (req, reply) => sendJson(reply, 200, { model_stats: inference.statistics(req.params.model, parseVersion(req.params.version)) }));

  const tracing = servingTracingOf(deps);
  const infer = async (req: FastifyRequest<{ Params: ModelParams }>, reply: FastifyReply) => {
    const model = resolveInferModel(inference, req.params.model, req.params.version);
    const caller = admitKserveCaller(deps.callers, model, req.raw);
    const trace = startHttpInferTrace(tracing, model, req.headers);
    // Fastify has read the body before the handler runs.
    trace?.capture('HTTP_RECV_END');
    let answer: Awaited<ReturnType<typeof runInferExchange>>;
    try {
      answer = await runInferExchange(inference, deps.sharedMemory, model, bodyBuffer(req.body), req.headers[HEADER_LENGTH], caller, trace, new ClientGoneSignal(reply.raw));
    } catch (err) {
      if (trace !== undefined) endHttpTrace(trace, err);
      throw err;
    }
    if (answer.headerLength !== undefined) reply.header('Inference-Header-Content-Length', String(answer.headerLength));
    trace?.capture('HTTP_SEND_START');
    const sent = reply.code(200).header('Content-Type', answer.contentType).send(answer.body);
    if (trace !== undefined) endHttpTrace(trace);
    return sent;
  };
  post('/v2/models/:model/infer', infer);
  post('/v2/models/:model/versions/:version/infer', infer);

  post('/v2/repository/index', (req, reply) => {
    const ready = optionalBool(parseJsonBody(req.body), 'ready');
    return sendJson(reply, 200, repository.index(ready));
  });
  post('/v2/repository/models/:model/load', async (req, reply) => {
    const body = parseJsonBody(req.body);
    const params = objectField(body, 'parameters');
    await repository.load(req.params.model, readJsonLoadParameters(params));
    return reply.code(200).send();
  });
  post('/v2/repository/models/:model/unload', async (req, reply) => {
    parseJsonBody(req.body);
    await repository.unload(req.params.model);
    return reply.code(200).send();
  });
}

function bodyBuffer(body: unknown): Buffer {
  if (Buffer.isBuffer(body)) return body;
  if (body === undefined || body === null) throw new HerdError('INVALID_ARG', 'inference request has no body');
  throw new HerdError('INTERNAL', 'request body was not read as bytes');
}

/** Control-API bodies are optional JSON objects. */
function parseJsonBody(body: unknown): Record<string, unknown> | undefined {
  if (body === undefined || body === null) return undefined;
  const buf = bodyBuffer(body);
  if (buf.length === 0) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(buf.toString('utf8'));
  } catch (err) {
    throw new HerdError('INVALID_ARG', `failed to parse the request JSON buffer: ${(err as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new HerdError('INVALID_ARG', 'request body must be a JSON object');
  return parsed as Record<string, unknown>;
}

function objectField(body: Record<string, unknown> | undefined, key: string): Record<string, unknown> | undefined {
  const value = body?.[key];
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new HerdError('INVALID_ARG', `'${key}' must be a JSON object`);
  return value as Record<string, unknown>;
}

function optionalBool(body: Record<string, unknown> | undefined, key: string): boolean {
  const value = body?.[key];
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw new HerdError('INVALID_ARG', `'${key}' must be true or false`);
  return value;
}

/** The trace settings and tracer the infer paths (this route, the fast path) trace with. */
export function servingTracingOf(deps: Pick<KserveDeps, 'traceSettings' | 'tracer'>): ServingTracing {
  return { settings: deps.traceSettings, tracer: deps.tracer ?? NOOP_TRACER };
}
