// The metrics endpoint on its own port (Triton's :8002): GET /metrics in Prometheus text format from
// the shared registry; other paths 404 and other methods 405, in Herd's `{"error"}` shape.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { renderMetrics } from '../metrics/create-metrics-registry.ts';
import { createKserveErrorAnswer } from './map-kserve-error.ts';
import { COMPRESS_MIN_BYTES, compressBody, parseAcceptEncoding } from './accept-encoding.ts';
import { type ServerLimits, serverLimitsSchema } from '../config/server-limits-config-schema.ts';
import { createLimitedServer } from './create-limited-server.ts';

const ALLOWED_METHODS = 'GET, HEAD';

export interface MetricsServerOptions {
  registry: Registry;
  host: string;
  /** 0 picks a free port. */
  port: number;
  log?: (line: string) => void;
  /** server.limits, shared with the HTTP port (the schema's defaults when absent). */
  limits?: ServerLimits;
}

export interface MetricsServer {
  /** e.g. http://127.0.0.1:8002 (a wildcard host is given as loopback). */
  url: string;
  /** Stops accepting, lets scrapes in progress finish, then resolves. Idempotent. */
  close(): Promise<void>;
}

export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  let closing = false;
  const server = createLimitedServer(options.limits ?? serverLimitsSchema.parse(undefined), (request, response) => {
    // A scrape has no body; read whatever came so the connection can be reused.
    request.resume();
    if (closing) response.setHeader('Connection', 'close');
    handle(request, response, options).catch((err: unknown) => {
      const message = err instanceof Error ? err.message : String(err);
      const logLine = sendError(response, 500, `failed to collect metrics: ${message}`, err);
      if (logLine !== undefined) options.log?.(`metrics: ${logLine}`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });

  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= new Promise<void>((resolve, reject) => {
      closing = true;
      server.close((err) => (err ? reject(err) : resolve()));
      // Idle keep-alive sockets would hold close() open; busy ones end after their answer (Connection: close).
      server.closeIdleConnections();
    });
    return closed;
  };
  return { url: formatUrl(server.address() as AddressInfo), close };
}

async function handle(request: IncomingMessage, response: ServerResponse, options: MetricsServerOptions): Promise<void> {
  const method = request.method ?? 'GET';
  const path = (request.url ?? '/').split('?')[0] ?? '/';
  if (path !== '/metrics') {
    sendError(response, 404, `Not Found: no route for ${method} ${path}`);
    return;
  }
  if (method !== 'GET' && method !== 'HEAD') {
    response.setHeader('Allow', ALLOWED_METHODS);
    sendError(response, 405, `Method Not Allowed: ${method} ${path} (allowed: ${ALLOWED_METHODS})`);
    return;
  }
  const { contentType, body } = await renderMetrics(options.registry);
  let payload: Buffer = Buffer.from(body, 'utf8');
  const encoding = payload.length >= COMPRESS_MIN_BYTES ? parseAcceptEncoding(request.headers['accept-encoding']) : undefined;
  if (encoding) {
    payload = await compressBody(payload, encoding);
    response.setHeader('Content-Encoding', encoding);
  }
  response.writeHead(200, { 'Content-Type': contentType, 'Content-Length': payload.length, Vary: 'Accept-Encoding' });
  response.end(method === 'HEAD' ? undefined : payload);
}

/** Writes the error (or drops the connection when an answer already began); returns the line to log, if any. */
function sendError(response: ServerResponse, status: number, message: string, cause?: unknown): string | undefined {
  const answer = createKserveErrorAnswer(status, message, cause);
  if (response.headersSent) {
    response.destroy();
    return answer.logLine;
  }
  response.writeHead(answer.status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(answer.body) });
  response.end(response.req.method === 'HEAD' ? undefined : answer.body);
  return answer.logLine;
}

function formatUrl(address: AddressInfo): string {
  const host = address.address === '0.0.0.0' ? '127.0.0.1' : address.address === '::' ? '::1' : address.address;
  return `http://${address.family === 'IPv6' ? `[${host}]` : host}:${address.port}`;
}
