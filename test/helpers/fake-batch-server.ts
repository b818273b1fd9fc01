// The HTTP shell the fake batch upstreams share (fake-openai-batches.ts, fake-anthropic-batches.ts): a node:http
// server on a free 127.0.0.1 port, a table of routes, a call log, and 429s on demand for chosen routes.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface FakeCall {
  method: string;
  /** Path and query as sent. */
  path: string;
  status: number;
}

export interface FakeReply {
  status: number;
  json?: unknown;
  /** A body sent as is (a JSONL file). */
  bytes?: Buffer;
  contentType?: string;
  headers?: Record<string, string>;
}

export interface FakeRoute {
  method: string;
  pattern: RegExp;
  /** Named so a test can make it answer 429 (`create`). */
  name?: string;
  handle(match: RegExpExecArray, req: IncomingMessage, url: URL): Promise<FakeReply> | FakeReply;
}

export interface FakeServerOptions {
  routes: FakeRoute[];
  /** A reply refusing the request (wrong key), or undefined to let it through. */
  authenticate(req: IncomingMessage): FakeReply | undefined;
  notFound(method: string, path: string): FakeReply;
  /** The body of a 429, in the upstream's error shape. */
  rateLimited(): unknown;
}

export class FakeBatchServer {
  readonly calls: FakeCall[] = [];
  url = '';
  private readonly server;
  private readonly sockets = new Set<Socket>();
  private readonly throttled = new Map<string, { count: number; retryAfterSeconds: number }>();

  constructor(private readonly options: FakeServerOptions) {
    this.server = createServer((req, res) => {
      this.serve(req, res).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: String(err) } }));
      });
    });
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The next `count` calls of the route named `name` answer 429 with this Retry-After. */
  throttle(name: string, count: number, retryAfterSeconds: number): void {
    this.throttled.set(name, { count, retryAfterSeconds });
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const method = req.method ?? 'GET';
    const reply = await this.route(method, url, req);
    // A body the handler did not read (a refused upload) is drained so the socket stays usable.
    if (!req.readableEnded) req.resume();
    this.calls.push({ method, path: url.pathname + url.search, status: reply.status });
    const headers: Record<string, string> = { ...reply.headers };
    if (reply.bytes !== undefined) {
      headers['content-type'] = reply.contentType ?? 'application/octet-stream';
      res.writeHead(reply.status, headers).end(reply.bytes);
      return;
    }
    headers['content-type'] = 'application/json';
    res.writeHead(reply.status, headers).end(JSON.stringify(reply.json ?? {}));
  }

  private async route(method: string, url: URL, req: IncomingMessage): Promise<FakeReply> {
    const refused = this.options.authenticate(req);
    if (refused !== undefined) return refused;
    for (const route of this.options.routes) {
      const match = route.method === method ? route.pattern.exec(url.pathname) : null;
      if (match === null) continue;
      const throttle = route.name === undefined ? undefined : this.throttled.get(route.name);
      if (throttle !== undefined && throttle.count > 0) {
        throttle.count--;
        return { status: 429, json: this.options.rateLimited(), headers: { 'retry-after': String(throttle.retryAfterSeconds) } };
      }
      return route.handle(match, req, url);
    }
    return this.options.notFound(method, url.pathname);
  }
}

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The body as JSON, or undefined when it is not. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  try {
    return JSON.parse((await readBody(req)).toString('utf8'));
  } catch {
    return undefined;
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
