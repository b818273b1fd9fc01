// The gRPC listener on :8001: Triton's GRPCInferenceService and grpc.health.v1.Health, messages up to
// INT32_MAX bytes each way (as tritonserver), keepalive from the tritonserver-style settings, and a
// draining close that answers every accepted call and ends open streams.
import { Server, ServerCredentials, loadPackageDefinition, type GrpcObject, type ServiceClientConstructor } from '@grpc/grpc-js';
import { createGrpcInferenceService, createHealthService } from './grpc-inference-service.ts';
import type { GrpcServiceDeps, TrackedStream } from './grpc-service-deps.ts';
import { loadGrpcProtos } from './load-grpc-protos.ts';

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

export async function startGrpcServer(deps: Omit<GrpcServiceDeps, 'trackStream'>, options: GrpcServerOptions): Promise<RunningGrpcServer> {
  const streams = new Set<TrackedStream>();
  let closing = false;
  const trackStream = (stream: TrackedStream) => {
    streams.add(stream);
    void stream.done.then(() => streams.delete(stream));
    if (closing) stream.drain();
  };
  const k = options.keepalive;
  const server = new Server({
    'grpc.max_receive_message_length': INT32_MAX,
    'grpc.max_send_message_length': INT32_MAX,
    'grpc.keepalive_time_ms': k.time_ms,
    'grpc.keepalive_timeout_ms': k.timeout_ms,
    // Accepted for tritonserver parity; grpc-js servers do not police client pings.
    'grpc.keepalive_permit_without_calls': k.permit_without_calls ? 1 : 0,
    'grpc.http2.max_pings_without_data': k.http2_max_pings_without_data,
    'grpc.http2.min_recv_ping_interval_without_data_ms': k.http2_min_recv_ping_interval_without_data_ms,
    'grpc.http2.max_ping_strikes': k.http2_max_ping_strikes,
  });
  const proto = loadPackageDefinition(loadGrpcProtos());
  const inference = (proto['inference'] as GrpcObject)['GRPCInferenceService'] as ServiceClientConstructor;
  const health = ((proto['grpc'] as GrpcObject)['health'] as GrpcObject)['v1'] as GrpcObject;
  server.addService(inference.service, createGrpcInferenceService({ ...deps, trackStream }));
  server.addService((health['Health'] as ServiceClientConstructor).service, createHealthService(deps.isReady, deps.apiGuard));

  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${host}:${options.port}`, ServerCredentials.createInsecure(), (err, bound) => {
      if (!err) return resolve(bound);
      // A port already in use must not leave the server's handles holding the process open.
      server.forceShutdown();
      reject(err);
    });
  });

  let closed: Promise<void> | undefined;
  return {
    address: `${host}:${port}`,
    close() {
      closed ??= (async () => {
        closing = true;
        // tryShutdown sends GOAWAY at once (clients open new calls elsewhere) and waits for the accepted
        // calls; open streams answer what they received and end meanwhile.
        const shutdown = new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
        for (const stream of streams) stream.drain();
        await Promise.all([...[...streams].map((s) => s.done), shutdown]);
      })();
      return closed;
    },
  };
}
