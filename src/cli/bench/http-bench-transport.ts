// `herd bench -i http`: the KServe v2 HTTP client, one keep-alive connection per request in flight.
import { KserveHttpClient } from '../../client/kserve-http-client.ts';
import type { PreparedInferRequest } from '../../client/timed-infer-exchange.ts';
import type { BenchTransport } from './bench-transport.ts';

export function createHttpBenchTransport(url: string): BenchTransport<PreparedInferRequest> {
  const control = new KserveHttpClient({ url, connections: 1 });
  return {
    protocol: 'http',
    where: control.origin,
    serverLive: () => control.serverLive(),
    modelReady: (m, v) => control.modelReady(m, v),
    modelMetadata: (m, v) => control.modelMetadata(m, v),
    modelConfig: (m, v) => control.modelConfig(m, v),
    modelStatistics: (m, v) => control.modelStatistics(m, v),
    infer: (m, inputs, options) => control.infer(m, inputs, options),
    registerSystemSharedMemory: (name, key, byteSize) => control.registerSystemSharedMemory(name, key, byteSize),
    unregisterSystemSharedMemory: (name) => control.unregisterSystemSharedMemory(name),
    prepareInfer: (m, inputs, options) => control.prepareInfer(m, inputs, options),
    // One request per connection at a time (tritonclient's way).
    openPool: (connections) => new KserveHttpClient({ url, connections, pipelining: 1 }),
    destroy: () => control.destroy(),
  };
}
