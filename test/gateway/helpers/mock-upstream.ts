// A local HTTP server (port 0) standing in for an upstream LLM API: records each request and lets a
// test answer it with exact wire bytes — JSON, SSE, hangs, resets.
import type { ChatChunk } from '../../../src/gateway/protocol/chat-types.ts';
import { canonicalChunk, type StreamPiece } from '../../../src/gateway/protocol/raw-sse.ts';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: unknown;
}

export type MockHandler = (req: RecordedRequest, res: ServerResponse, raw: IncomingMessage) => void | Promise<void>;

export interface MockUpstream {
  url: string;
  requests: RecordedRequest[];
  /** Distinct TCP connections accepted so far (keep-alive reuse keeps this at 1). */
  connectionCount(): number;
  setHandler(handler: MockHandler): void;
  close(): Promise<void>;
}

export async function startMockUpstream(handler: MockHandler): Promise<MockUpstream> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  let current = handler;
  const server = createServer(async (raw, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of raw) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const recorded: RecordedRequest = {
      method: raw.method ?? '',
      url: raw.url ?? '',
      headers: raw.headers,
      body: text === '' ? undefined : JSON.parse(text),
    };
    requests.push(recorded);
    await current(recorded, res, raw);
  });
  server.on('connection', (socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    connectionCount: () => connections,
    setHandler: (next) => {
      current = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

export type SseFrame =
  | {
      event?: string;
      /** An object is JSON-encoded; a string is sent as is. */
      data: unknown;
    }
  /** A `: comment` line, as servers send for keep-alive. */
  | { comment: string };

/** Encodes frames exactly as SSE servers do: `event: x\ndata: {...}\n\n`. */
export function encodeSse(frames: SseFrame[], lineEnd = '\n'): string {
  return frames
    .map((frame) => {
      if ('comment' in frame) return `: ${frame.comment}${lineEnd}${lineEnd}`;
      const data = typeof frame.data === 'string' ? frame.data : JSON.stringify(frame.data);
      return `${frame.event ? `event: ${frame.event}${lineEnd}` : ''}data: ${data}${lineEnd}${lineEnd}`;
    })
    .join('');
}

export interface SseOptions {
  lineEnd?: string;
  /** Pause between frames, to exercise incremental parsing. */
  delayMs?: number;
  /** Destroy the socket after this many frames instead of ending the response (a mid-stream reset). */
  resetAfter?: number;
}

export async function sendSse(res: ServerResponse, frames: SseFrame[], options: SseOptions = {}): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (let i = 0; i < frames.length; i++) {
    if (options.resetAfter !== undefined && i === options.resetAfter) {
      await pause(10);
      res.socket?.destroy();
      return;
    }
    res.write(encodeSse([frames[i]], options.lineEnd));
    if (options.delayMs) await pause(options.delayMs);
  }
  res.end();
}

export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Drains an async iterable into an array. */
export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

/** Drains a gateway stream that carries canonical chunks only (no pass-through was asked for). */
export async function collectChunks(pieces: AsyncIterable<StreamPiece>): Promise<ChatChunk[]> {
  const out: ChatChunk[] = [];
  for await (const piece of pieces) out.push(canonicalChunk(piece));
  return out;
}
