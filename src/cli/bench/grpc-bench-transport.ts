// `herd bench -i grpc`: the KServe v2 gRPC client. A level's requests share one channel (one HTTP/2
// connection, multiplexed), as tritonclient's cached channels do.
import { KserveGrpcClient } from '../../client/kserve-grpc-client.ts';
import type { ModelConfigDocument } from '../../client/kserve-types.ts';
import type { PreparedGrpcInferRequest } from '../../client/timed-grpc-infer-exchange.ts';
import { internal } from '../../core/errors.ts';
import type { BenchTransport } from './bench-transport.ts';

export function createGrpcBenchTransport(url: string): BenchTransport<PreparedGrpcInferRequest> {
  const control = new KserveGrpcClient({ url });
  return {
    protocol: 'grpc',
    where: control.address,
    serverLive: () => control.serverLive(),
    modelReady: (m, v) => control.modelReady(m, v),
    modelMetadata: (m, v) => control.modelMetadata(m, v),
    modelConfig: async (m, v) => convertGrpcModelConfig(await control.modelConfig(m, v)),
    modelStatistics: (m, v) => control.modelStatistics(m, v),
    infer: (m, inputs, options) => control.infer(m, inputs, options),
    registerSystemSharedMemory: (name, key, byteSize) => control.registerSystemSharedMemory(name, key, byteSize),
    unregisterSystemSharedMemory: (name) => control.unregisterSystemSharedMemory(name),
    prepareInfer: (m, inputs, options) => control.prepareInfer(m, inputs, options),
    openPool: () => new KserveGrpcClient({ url, ownConnection: true }),
    destroy: () => control.destroy(),
  };
}

type Message = Record<string, unknown>;

/** The ModelConfig message (proto field names, int64 as strings) as the fields the bench reads from the HTTP document. */
export function convertGrpcModelConfig(config: Message): ModelConfigDocument {
  const tensors = (value: unknown) => {
    if (!Array.isArray(value)) throw internal("malformed ModelConfig: 'input' and 'output' must be lists");
    return (value as Message[]).map((t) => ({
      name: String(t['name'] ?? ''),
      data_type: String(t['data_type'] ?? ''),
      dims: Array.isArray(t['dims']) ? (t['dims'] as unknown[]).map(Number) : [],
      optional: t['optional'] === true,
    }));
  };
  const policy = config['model_transaction_policy'] as Message | null | undefined;
  const sequence = config['sequence_batching'];
  return {
    ...config,
    name: String(config['name'] ?? ''),
    max_batch_size: Number(config['max_batch_size'] ?? 0),
    input: tensors(config['input']),
    output: tensors(config['output']),
    ...(sequence === null || sequence === undefined ? { sequence_batching: undefined } : { sequence_batching: sequence }),
    model_transaction_policy: { decoupled: policy?.['decoupled'] === true },
  };
}
