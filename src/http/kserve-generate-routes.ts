// Triton's generate extension: POST /v2/models/{m}[/versions/{v}]/generate and /generate_stream. Thin: the
// body is converted by core/codecs/kserve-generate.ts, each response written back as one JSON object or one
// `data:` event (through sse-writer.ts: a client that does not read pauses the model); errors as map-kserve-error.ts says.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createGenerateResponse, parseGenerateRequest, type GenerateInputSpec } from '../core/codecs/kserve-generate.ts';
import { isDataType } from '../core/datatype.ts';
import { HerdError } from '../core/errors.ts';
import type { InferAnswer, InferCall } from '../serving/infer-call.ts';
import { ClientGoneSignal } from './client-gone-signal.ts';
import type { InferenceService } from '../serving/inference-service.ts';
import type { LoadedModel } from '../serving/repository/loaded-model.ts';
import type { InferStreamEvent } from '../serving/response-stream.ts';
import { DEFAULT_STREAM_LIMITS, SseWriter, type StreamLimits } from './sse-writer.ts';
import { createModelMetadata } from '../serving/model-metadata.ts';
import type { ModelConfig } from '../serving/model-config/model-config.ts';
import { admitKserveCaller, type CallerGate } from './kserve-caller.ts';
import { endHttpTrace, resolveInferModel } from './kserve-infer-exchange.ts';
import { startHttpGenerateTrace, traceGenerateEvents } from './kserve-generate-trace.ts';
import type { InferTrace, ServingTracing } from '../serving/infer-trace.ts';
import { createKserveErrorAnswer, type KserveErrorAnswer, mapErrorToKserve } from './map-kserve-error.ts';

export interface GenerateDeps {
  inference: InferenceService;
  maxInputSize: number;
  /** Where the error answers map-kserve-error.ts marks for the operator go. */
  log?: ((line: string) => void) | undefined;
  /** Admits callers of models that spend; absent: no gateway, nothing spends. */
  callers?: CallerGate | undefined;
  /** generate_stream's slow-reader bounds (server.stream_*); absent: the defaults. */
  streams?: StreamLimits | undefined;
  /** Triton's trace settings and the tracer; absent: nothing is traced. */
  tracing?: ServingTracing | undefined;
}

type ModelParams = { model: string; version?: string };

/** A decoded generate request and the model it was resolved to, once. */
export interface GenerateCall {
  call: InferCall;
  model: LoadedModel;
  /** When Triton's trace settings sampled the request; it ends once the answer's last byte went out. */
  trace?: InferTrace | undefined;
}

export function registerGenerateRoutes(app: FastifyInstance, deps: GenerateDeps, allow: (url: string, methods: string[]) => void): void {
  const route = (streaming: boolean) => async (req: FastifyRequest<{ Params: ModelParams }>, reply: FastifyReply) => {
    const call = decodeGenerateCall(deps, req.params, req.body, req.raw);
    reply.hijack();
    await answerGenerateCall(deps, call, streaming, reply.raw);
  };
  for (const [suffix, streaming] of [
    ['generate', false],
    ['generate_stream', true],
  ] as const) {
    for (const url of [`/v2/models/:model/${suffix}`, `/v2/models/:model/versions/:version/${suffix}`]) {
      app.post<{ Params: ModelParams }>(url, route(streaming));
      allow(url, ['POST']);
    }
  }
}

/** Runs a decoded call and writes every response: one JSON object (generate) or SSE events (generate_stream). */
export async function answerGenerateCall(deps: GenerateDeps, { call, model, trace }: GenerateCall, streaming: boolean, res: ServerResponse): Promise<void> {
  // A client gone before the answer cancels the request, queued or running (decoupled models included).
  call.signal = new ClientGoneSignal(res);
  const events = traceGenerateEvents(trace, deps.inference.streamInfer(call, undefined, model), res);
  const fail = (err: unknown) => logged(mapErrorToKserve(err), deps.log);
  if (streaming) await writeStream(new SseWriter(res, deps.streams ?? DEFAULT_STREAM_LIMITS, NO_ACTION), res, events, fail);
  else await writeSingle(res, events, fail);
}

/** An error answer, its log line written when the mapping marks one. */
function logged(answer: KserveErrorAnswer, log: GenerateDeps['log']): KserveErrorAnswer {
  if (answer.logLine !== undefined) log?.(answer.logLine);
  return answer;
}

/** Everything that can fail before inference starts: the caller answers it as a plain JSON error. */
/** `sender`: the request, read for its key and address only when the model spends, and for its traceparent. */
/** `receivedAt`: monotonic ms when the request began arriving (HTTP_RECV_START of a traced one), if before now. */
export function decodeGenerateCall(deps: GenerateDeps, params: ModelParams, body: unknown, sender: IncomingMessage, receivedAt?: number): GenerateCall {
  const model = resolveInferModel(deps.inference, params.model, params.version);
  const caller = admitKserveCaller(deps.callers, model, sender);
  // Sampled once the model is known, before the body is converted, as Triton's HandleGenerate does.
  const trace = startHttpGenerateTrace(deps.tracing, model, sender.headers, receivedAt);
  let decoded: ReturnType<typeof parseGenerateRequest>;
  try {
    decoded = parseGenerateRequest(parseBody(body), inputSpecs(model.config), deps.maxInputSize);
  } catch (err) {
    if (trace !== undefined) endHttpTrace(trace, err);
    throw err;
  }
  const call: InferCall = { modelName: model.name, version: model.version, id: decoded.id, parameters: decoded.parameters, inputs: decoded.inputs, outputs: [] };
  if (caller !== undefined) call.caller = caller;
  if (trace !== undefined) call.trace = trace;
  return { call, model, trace };
}

/** The inputs as model metadata describes them (batch dim as -1), computed once per loaded config. */
const specsByConfig = new WeakMap<ModelConfig, GenerateInputSpec[]>();
function inputSpecs(config: ModelConfig): GenerateInputSpec[] {
  let specs = specsByConfig.get(config);
  if (!specs) {
    specs = createModelMetadata(config, []).inputs.map((i) => {
      if (!isDataType(i.datatype)) throw new HerdError('INVALID_ARG', `input '${i.name}' has unsupported datatype ${i.datatype}`);
      return { name: i.name, datatype: i.datatype, shape: i.shape };
    });
    specsByConfig.set(config, specs);
  }
  return specs;
}

function parseBody(body: unknown): unknown {
  if (body === undefined || body === null) return {};
  const text = Buffer.isBuffer(body) ? body.toString('utf8') : String(body);
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new HerdError('INVALID_ARG', `failed to parse the request JSON buffer: ${(err as Error).message}`);
  }
}

type Fail = (err: unknown) => KserveErrorAnswer;

/** One event as a status and JSON text (an error through the KServe mapping); nothing for an empty final event. */
function eventBody(event: InferStreamEvent<InferAnswer>, fail: Fail): { status: number; text: string } | undefined {
  if (event.error) {
    const answer = fail(event.error);
    return { status: answer.status, text: answer.body };
  }
  if (!event.answer) return undefined;
  return { status: 200, text: JSON.stringify(createGenerateResponse(event.answer)) };
}

/** generate: exactly one response, else Triton's error; the status comes from that response. */
async function writeSingle(res: ServerResponse, events: AsyncIterable<InferStreamEvent<InferAnswer>>, fail: Fail): Promise<void> {
  const bodies: { status: number; text: string }[] = [];
  try {
    for await (const event of events) {
      const body = eventBody(event, fail);
      if (body !== undefined) bodies.push(body);
    }
  } catch (err) {
    const answer = fail(err);
    bodies.push({ status: answer.status, text: answer.body });
  }
  if (res.destroyed) return;
  let single = bodies.length === 1 ? bodies[0] : undefined;
  if (single === undefined) {
    const message = 'generate expects model to produce exactly 1 response, use generate stream for model that generates various number of responses';
    const answer = createKserveErrorAnswer(bodies[0]?.status ?? 500, message);
    single = { status: answer.status, text: answer.body };
  }
  res.writeHead(single.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(single.text) });
  res.end(single.text);
}

/**
 * generate_stream: the first response sets the status (an error first is a non-200 SSE answer, as in
 * Triton); later errors arrive as `data: {"error"}` inside the 200 stream. No `event:` lines, no [DONE].
 */
async function writeStream(writer: SseWriter, res: ServerResponse, events: AsyncIterable<InferStreamEvent<InferAnswer>>, fail: Fail): Promise<void> {
  let started = false;
  const send = (text: string, status: number) => {
    if (writer.closed) return;
    if (!started) {
      started = true;
      res.writeHead(status, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    }
    writer.send(`data: ${text}\n\n`);
  };
  try {
    for await (const event of events) {
      const body = eventBody(event, fail);
      if (body !== undefined) send(body.text, body.status);
      // A client that does not read stops the model's next response (a dropped one ends the stream).
      const wait = writer.waitForReader();
      if (writer.closed || (wait !== undefined && !(await wait))) break;
    }
  } catch (err) {
    const answer = fail(err);
    send(answer.body, answer.status);
  }
  if (!started && !res.destroyed) res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  writer.end();
}

/** A dropped generate_stream needs nothing more: destroying the response aborts a decoupled model's request ('close'). */
const NO_ACTION = () => undefined;
