// An open-loop HTTP/1.1 load generator on raw keep-alive sockets, for bench E: prebuilt request bytes out,
// only the status line and Content-Length read back. At 4× overload the undici generator spent more CPU
// per request than the server's refusals and lagged 4–5 ms (p99) on these 2 cores, which became E's p99.
import { connect, type Socket } from 'node:net';
import { summariseLoad, type LoadResult, type LoadSpec } from './closed-loop-load.ts';

const HEADER_END = Buffer.from('\r\n\r\n');

interface Connection {
  socket: Socket;
  /** performance.now() when the request in flight was written; undefined when idle. */
  sentAt: number | undefined;
  pending: Buffer;
}

/** Sends spec.ratePerSecond requests per second over at most spec.concurrency connections, for spec.durationMs. */
export async function runRawOpenLoop(spec: LoadSpec & { ratePerSecond: number }): Promise<LoadResult> {
  const url = new URL(spec.origin);
  const head = [
    `POST ${spec.path} HTTP/1.1`,
    `Host: ${url.host}`,
    `Content-Length: ${spec.body.length}`,
    'Connection: keep-alive',
    ...Object.entries(spec.headers).map(([k, v]) => `${k}: ${v}`),
  ].join('\r\n');
  const request = Buffer.concat([Buffer.from(`${head}\r\n\r\n`), spec.body]);
  const ok: number[] = [];
  const refused: number[] = [];
  const statuses: Record<number, number> = {};
  let errors = 0;
  let backlog = 0;
  const idle: Connection[] = [];
  let open = 0;
  let settle: (() => void) | undefined;

  const send = (c: Connection) => {
    c.sentAt = performance.now();
    c.socket.write(request);
  };
  const release = (c: Connection) => {
    c.sentAt = undefined;
    if (backlog > 0) {
      backlog--;
      send(c);
      return;
    }
    idle.push(c);
    if (settle && idle.length === open) settle();
  };
  const onData = (c: Connection, chunk: Buffer) => {
    c.pending = c.pending.length === 0 ? chunk : Buffer.concat([c.pending, chunk]);
    const end = c.pending.indexOf(HEADER_END);
    if (end < 0) return;
    const headers = c.pending.subarray(0, end).toString('latin1');
    const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(headers)?.[1] ?? 0);
    const total = end + HEADER_END.length + length;
    if (c.pending.length < total) return;
    const us = (performance.now() - (c.sentAt ?? 0)) * 1000;
    const status = Number(headers.slice(9, 12));
    statuses[status] = (statuses[status] ?? 0) + 1;
    (status === 200 ? ok : refused).push(us);
    c.pending = c.pending.subarray(total);
    release(c);
  };
  const connection = (): Promise<Connection> =>
    new Promise((resolve, reject) => {
      const socket = connect(Number(url.port), url.hostname);
      socket.setNoDelay(true);
      const c: Connection = { socket, sentAt: undefined, pending: Buffer.alloc(0) };
      socket.once('connect', () => resolve(c));
      socket.on('data', (chunk: Buffer) => onData(c, chunk));
      socket.on('error', (err) => reject(err));
      socket.on('close', () => {
        // A request in flight on a closed connection is an error; the connection leaves the pool.
        open--;
        const at = idle.indexOf(c);
        if (at >= 0) idle.splice(at, 1);
        if (c.sentAt !== undefined) errors++;
        // With no connection left, requests still waiting for one can never be sent: they count as errors too.
        if (open === 0) {
          errors += backlog;
          backlog = 0;
        }
        if (settle && idle.length === open) settle();
      });
    });

  const connections = await Promise.all(Array.from({ length: spec.concurrency }, connection));
  open = connections.length;
  idle.push(...connections);
  const interval = 1000 / spec.ratePerSecond;
  const started = performance.now();
  const end = started + spec.durationMs;
  for (let next = started; next < end; next += interval) {
    const wait = next - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const c = idle.pop();
    // Every connection busy: the request waits for the first one free (counted from its own write).
    if (c) send(c);
    else backlog++;
  }
  if (idle.length < open || backlog > 0)
    await new Promise<void>((r) => {
      settle = r;
    });
  const seconds = (performance.now() - started) / 1000;
  for (const c of connections) c.socket.destroy();
  return summariseLoad({ ok, refused, seconds, statuses, errors });
}
