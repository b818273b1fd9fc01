// The gRPC listener on :8001, on node:http2 directly: Triton's GRPCInferenceService and grpc.health.v1.Health,
// messages up to INT32_MAX bytes each way (as tritonserver), keepalive pings from the tritonserver-style settings,
// and a draining close (GOAWAY, every accepted call answered, open streams ended). Why not grpc-js's server:
// docs/decisions/grpc-http2-path.md.
import { createServer, type Http2Session, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import type { ServerHttp2Session } from 'node:http2';
import type { GrpcServiceDeps, TrackedStream } from './grpc-service-deps.ts';
import { formatPeer } from './grpc-call-metadata.ts';
import { ACCEPTED_ENCODINGS, isMessageEncoding } from './grpc-frames.ts';
import { GrpcHttp2Call } from './grpc-http2-call.ts';
import { GrpcCode } from './map-grpc-status.ts';
import { createGrpcRoutes } from './create-grpc-routes.ts';

/** tritonserver's --grpc-keepalive-* / --grpc-http2-* settings (milliseconds and counts). */
export interface GrpcKeepaliveSettings {
  time_ms: number;
  timeout_ms: number;
  permit_without_calls: boolean;
  http2_max_pings_without_data: number;
  http2_min_recv_ping_interval_without_data_ms: number;
  http2_max_ping_strikes: number;
}

export interface GrpcServerOptions {
  host: string;
  port: number;
  keepalive: GrpcKeepaliveSettings;
}

export interface RunningGrpcServer {
  /** host:port actually bound (port 0 resolved). */
  address: string;
  close(): Promise<void>;
}

const INT32_MAX = 2 ** 31 - 1;
/** Timers beyond this never fire in Node; grpc-js treats it as "no keepalive" too. */
const KEEPALIVE_OFF_MS = INT32_MAX;
/** A stream's and the connection's receive window: a 1 MB request arrives without waiting on WINDOW_UPDATEs. */
const WINDOW_BYTES = 8 * 1024 * 1024;

export async function startGrpcServer(deps: Omit<GrpcServiceDeps, 'trackStream'>, options: GrpcServerOptions): Promise<RunningGrpcServer> {
  const streams = new Set<TrackedStream>();
  const sessions = new Set<ServerHttp2Session>();
  let closing = false;
  const trackStream = (stream: TrackedStream) => {
    streams.add(stream);
    void stream.done.then(() => streams.delete(stream));
    if (closing) stream.drain();
  };
  const routes = createGrpcRoutes({ ...deps, trackStream }, INT32_MAX);
  const server = createServer({
    maxSessionMemory: Number.MAX_SAFE_INTEGER,
    maxSendHeaderBlockLength: Number.MAX_SAFE_INTEGER,
    settings: { initialWindowSize: WINDOW_BYTES, maxFrameSize: 16_384 },
  });
  server.on('session', (session: ServerHttp2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
    session.on('error', () => {
      // A reset connection: its streams see 'close' and cancel their calls.
    });
    session.once('connect', () => session.setLocalWindowSize(WINDOW_BYTES));
    keepAlive(session, options.keepalive);
  });
  server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    stream.on('error', () => {
      // A stream reset mid-write: 'close' follows and the call is cancelled there.
    });
    const contentType = headers['content-type'];
    if (typeof contentType !== 'string' || !contentType.startsWith('application/grpc')) {
      stream.respond({ ':status': 415 }, { endStream: true });
      return;
    }
    const socket = stream.session?.socket;
    const call = new GrpcHttp2Call(stream, headers, formatPeer(socket?.remoteAddress, socket?.remotePort));
    const path = headers[':path'] ?? '';
    const route = routes.get(path);
    if (route === undefined) {
      call.end({ code: GrpcCode.UNIMPLEMENTED, details: `The server does not implement the method ${path}` });
      return;
    }
    const encoding = headers['grpc-encoding'] ?? 'identity';
    if (typeof encoding !== 'string' || !isMessageEncoding(encoding)) {
      call.end({ code: GrpcCode.UNIMPLEMENTED, details: `Received message compressed with unsupported encoding "${String(encoding)}"; accepted: ${ACCEPTED_ENCODINGS}` });
      return;
    }
    route(call, encoding);
  });

  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });

  let closed: Promise<void> | undefined;
  return {
    address: `${host}:${port}`,
    close() {
      closed ??= (async () => {
        closing = true;
        // GOAWAY at once on every connection (clients open new calls elsewhere); accepted calls finish, open
        // streams answer what they received and end meanwhile.
        const listening = new Promise<void>((resolve) => server.close(() => resolve()));
        const ended = [...sessions].map((session) => new Promise<void>((resolve) => (session.closed ? resolve() : session.close(() => resolve()))));
        for (const stream of streams) stream.drain();
        await Promise.all([...[...streams].map((s) => s.done), ...ended, listening]);
      })();
      return closed;
    },
  };
}

/** Pings every `time_ms` (when set below the off value), and drops a connection whose ping goes unanswered for `timeout_ms`. */
function keepAlive(session: Http2Session, settings: GrpcKeepaliveSettings): void {
  if (!(settings.time_ms > 0 && settings.time_ms < KEEPALIVE_OFF_MS)) return;
  let timer: NodeJS.Timeout | undefined;
  const schedule = (ms: number, action: () => void) => {
    timer = setTimeout(action, ms);
    timer.unref();
  };
  const ping = () => {
    if (session.destroyed) return;
    let sent = false;
    try {
      sent = session.ping((err) => {
        if (timer !== undefined) clearTimeout(timer);
        if (err) session.destroy();
        else schedule(settings.time_ms, ping);
      });
    } catch {
      sent = false;
    }
    if (!sent) {
      session.destroy();
      return;
    }
    schedule(settings.timeout_ms, () => session.destroy());
  };
  schedule(settings.time_ms, ping);
  session.once('close', () => {
    if (timer !== undefined) clearTimeout(timer);
  });
}
