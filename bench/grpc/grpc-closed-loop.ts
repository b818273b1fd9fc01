// A closed-loop gRPC load generator, the counterpart of bench/serving/closed-loop-load.ts's runLoad: a
// ModelInferRequest encoded once and sent back to back from C slots over a few channels, the answer's
// bytes counted, not decoded (as the HTTP generator reads the body without decoding it).
import { Client, credentials, Metadata } from '@grpc/grpc-js';
import { loadGrpcProtos } from '../../src/grpc/load-grpc-protos.ts';
import { summariseLoad, type LoadResult } from '../lib/closed-loop-load.ts';

const INT32_MAX = 2 ** 31 - 1;
const METHOD = '/inference.GRPCInferenceService/ModelInfer';

/** A ModelInferRequest as proto-loader takes it, serialised once. */
export function encodeInferRequest(request: Record<string, unknown>): Buffer {
  const definition = loadGrpcProtos()['inference.GRPCInferenceService'] as unknown as Record<string, { requestSerialize(v: unknown): Buffer }>;
  return definition['ModelInfer']!.requestSerialize(request);
}

export class GrpcLoad {
  private readonly clients: Client[];

  constructor(address: string, channels: number) {
    this.clients = Array.from(
      { length: channels },
      (_, i) =>
        new Client(address, credentials.createInsecure(), {
          'grpc.max_receive_message_length': INT32_MAX,
          'grpc.max_send_message_length': INT32_MAX,
          // Distinct channel arguments keep grpc-js from sharing one subchannel (one TCP connection) between them.
          'grpc.channel_id': i,
        } as Record<string, number>),
    );
  }

  async run(body: Buffer, concurrency: number, durationMs: number): Promise<LoadResult> {
    const ok: number[] = [];
    let errors = 0;
    const started = performance.now();
    const end = started + durationMs;
    const once = (client: Client) =>
      new Promise<void>((resolve) => {
        const t0 = performance.now();
        client.makeUnaryRequest(
          METHOD,
          (b: Buffer) => b,
          (b: Buffer) => b,
          body,
          new Metadata(),
          (err) => {
            if (err) errors += 1;
            else ok.push((performance.now() - t0) * 1000);
            resolve();
          },
        );
      });
    await Promise.all(
      Array.from({ length: concurrency }, async (_, slot) => {
        const client = this.clients[slot % this.clients.length]!;
        while (performance.now() < end) await once(client);
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    return summariseLoad({ ok, refused: [], seconds, statuses: { 200: ok.length }, errors });
  }

  close(): void {
    for (const c of this.clients) c.close();
  }
}
