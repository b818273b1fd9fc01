// The hot route without the framework: a plain POST /v2/models/{m}[/versions/{v}]/infer with a known
// length and no content coding goes straight to the infer exchange. Everything else (compression,
// chunked bodies, oversized bodies, shutdown) falls through to Fastify, which answers it in full.
// One difference by design: a model whose queue is full gets its 503 here before the body is decoded
// (an unknown model its error too, as the full path would answer it).
// Fastify's per-request plumbing is a large share of a tiny model's cost (docs/decisions/framework-free-fast-paths.md).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { InferenceService } from '../serving/inference-service.ts';
import type { LoadedModel } from '../serving/repository/loaded-model.ts';
import { endHttpTrace, resolveInferModel, runInferExchange, startHttpInferTrace } from './kserve-infer-exchange.ts';
import { type InferTrace, type ServingTracing, withTraceIds } from '../serving/infer-trace.ts';
import { mapErrorToKserve } from './map-kserve-error.ts';
import type { SystemSharedMemoryRegistry } from '../serving/shared-memory/system-shared-memory-registry.ts';
import { hasPlainBody, readBody } from './plain-body.ts';
import { admitKserveCaller, type CallerGate } from './kserve-caller.ts';
import type { ChatCaller } from '../core/chat-port.ts';
import { ClientGoneSignal } from './client-gone-signal.ts';

const INFER_PATH = /^\/v2\/models\/([^/?]+)(?:\/versions\/([^/?]+))?\/infer$/;

export interface FastInferOptions {
  inference: InferenceService;
  sharedMemory: SystemSharedMemoryRegistry;
  maxInputSize: number;
  /** True once shutdown began: then Fastify answers (503 for new requests, Connection: close). */
  isClosing: () => boolean;
  log?: (line: string) => void;
  /** Admits callers of models that spend; absent: no gateway, nothing spends. */
  callers?: CallerGate | undefined;
  /** Triton's trace settings and the tracer; absent: nothing is traced. */
  tracing?: ServingTracing | undefined;
}

/** Returns true when it took the request. */
export function createFastInferHandler(options: FastInferOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    if (req.method !== 'POST' || options.isClosing()) return false;
    const headers = req.headers;
    // Responses here are never compressed: a client that accepts an encoding goes to Fastify.
    if (headers['accept-encoding'] !== undefined || !hasPlainBody(req, options.maxInputSize)) return false;
    const match = INFER_PATH.exec(req.url ?? '');
    if (!match) return false;
    let model: string;
    let version: string | undefined;
    try {
      model = decodeURIComponent(match[1] as string);
      version = match[2] === undefined ? undefined : decodeURIComponent(match[2]);
    } catch {
      return false;
    }
    const sendError = (err: unknown) => {
      const { status, body, logLine } = mapErrorToKserve(err);
      if (logLine !== undefined) options.log?.(withTraceIds(logLine, err));
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...(options.isClosing() ? { connection: 'close' } : {}) });
      res.end(body);
    };
    // An unknown model, and a model whose queue is full at every priority level, refuse whatever the body
    // holds: answer without buffering or decoding it (the body is still read off the socket, to keep the
    // connection usable). Under overload most requests are refused, and decoding them took the CPU the
    // accepted ones needed.
    let loaded: LoadedModel;
    let refusal: unknown;
    let caller: ChatCaller | undefined;
    let trace: InferTrace | undefined;
    try {
      loaded = resolveInferModel(options.inference, model, version);
      // A model that spends refuses a caller nobody pays for before its body is read.
      caller = admitKserveCaller(options.callers, loaded, req);
      refusal = options.inference.refuseIfQueueFull(loaded);
      // Sampled as the request is taken: HTTP_RECV_START is now.
      if (refusal === undefined) trace = startHttpInferTrace(options.tracing, loaded, headers);
    } catch (err) {
      refusal = err;
    }
    if (refusal !== undefined) {
      req.on('end', () => sendError(refusal));
      req.resume();
      return true;
    }
    readBody(req, (body) => {
      trace?.capture('HTTP_RECV_END');
      runInferExchange(options.inference, options.sharedMemory, loaded, body, headers['inference-header-content-length'], caller, trace, new ClientGoneSignal(res)).then(
        (reply) => {
          const out: Record<string, string | number> = { 'content-type': reply.contentType, 'content-length': reply.body.length };
          if (reply.headerLength !== undefined) out['inference-header-content-length'] = reply.headerLength;
          if (options.isClosing()) out['connection'] = 'close';
          trace?.capture('HTTP_SEND_START');
          res.writeHead(200, out);
          res.end(reply.body);
          if (trace !== undefined) endHttpTrace(trace);
        },
        (err: unknown) => {
          trace?.capture('HTTP_SEND_START');
          trace?.markFailure(err);
          sendError(err);
          if (trace !== undefined) endHttpTrace(trace, err);
        },
      );
    });
    return true;
  };
}
