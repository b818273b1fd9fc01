// The SERVER span of one gateway HTTP exchange (`POST /v1/chat/completions` …), with the HTTP semantic
// conventions' attributes; its parent is the request's traceparent, so a caller's trace continues through Herd.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HerdError } from '../core/errors.ts';
import { extractFromHeaders, type HerdSpan, SpanKind, type Tracer } from '../tracing/index.ts';
import { clientAddressOf } from './resolve-client-address.ts';

/** Undefined when tracing is off: the exchange then does no tracing work at all. */
export function startServerSpan(tracer: Tracer | undefined, req: IncomingMessage, requestId: string): HerdSpan | undefined {
  if (tracer === undefined || !tracer.enabled) return undefined;
  const path = (req.url ?? '/').split('?', 1)[0] as string;
  const span = tracer.startSpan(`POST ${path}`, { kind: SpanKind.SERVER, parent: extractFromHeaders(req.headers) });
  if (!span.recording) return span;
  // Address and port from the Host header, as the conventions prefer: the socket's getters cost a system call each.
  const host = req.headers.host ?? '';
  const colon = host.lastIndexOf(':');
  const hasPort = colon > host.lastIndexOf(']');
  span.setAttributes({
    'http.request.method': req.method ?? 'POST',
    'http.route': path,
    'url.path': path,
    'url.scheme': 'http',
    'server.address': hasPort ? host.slice(0, colon) : host,
    'server.port': hasPort ? Number(host.slice(colon + 1)) : undefined,
    'client.address': clientAddressOf(req).address,
    'user_agent.original': req.headers['user-agent'],
    'herd.request.id': requestId,
  });
  return span;
}

/** The answer's status; a failure's HerdError code as error.type (a 4xx refusal too: the semconv's server rule is 5xx, Herd's clients want both). */
export function endServerSpan(span: HerdSpan, res: ServerResponse, failure: HerdError | undefined): void {
  if (span.recording) {
    span.setAttribute('http.response.status_code', res.statusCode);
    if (failure !== undefined) {
      if (res.statusCode >= 500) span.recordError(failure);
      else span.setAttribute('error.type', failure.code);
    }
  }
  span.end();
}
