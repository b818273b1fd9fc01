// The generate extension without the framework, as fast-infer-path.ts does for infer: a plain POST to
// /v2/models/{m}[/versions/{v}]/generate or /generate_stream with a known length and no content coding
// is decoded and answered here; everything else falls through to Fastify's routes, which answer the same.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerGenerateCall, decodeGenerateCall, type GenerateCall, type GenerateDeps } from './kserve-generate-routes.ts';
import { mapErrorToKserve } from './map-kserve-error.ts';
import { hasPlainBody, readBody } from './plain-body.ts';

const GENERATE_PATH = /^\/v2\/models\/([^/?]+)(?:\/versions\/([^/?]+))?\/(generate|generate_stream)$/;

export interface FastGenerateOptions extends GenerateDeps {
  isClosing: () => boolean;
  log?: (line: string) => void;
}

/** Returns true when it took the request. */
export function createFastGenerateHandler(options: FastGenerateOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    if (req.method !== 'POST' || options.isClosing()) return false;
    if (req.headers['accept-encoding'] !== undefined || !hasPlainBody(req, options.maxInputSize)) return false;
    const match = GENERATE_PATH.exec(req.url ?? '');
    if (!match) return false;
    let model: string;
    let version: string | undefined;
    try {
      model = decodeURIComponent(match[1] as string);
      version = match[2] === undefined ? undefined : decodeURIComponent(match[2]);
    } catch {
      return false;
    }
    const streaming = match[3] === 'generate_stream';
    const sendError = (err: unknown) => {
      const { status, body, logLine } = mapErrorToKserve(err);
      if (logLine !== undefined) options.log?.(logLine);
      if (res.headersSent || res.destroyed) return;
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    // HTTP_RECV_START of a traced request: it is sampled once the body is read and its model known.
    const receivedAt = performance.now();
    readBody(req, (body) => {
      let call: GenerateCall;
      try {
        call = decodeGenerateCall(options, version === undefined ? { model } : { model, version }, body, req, receivedAt);
      } catch (err) {
        sendError(err);
        return;
      }
      answerGenerateCall(options, call, streaming, res).catch(sendError);
    });
    return true;
  };
}
