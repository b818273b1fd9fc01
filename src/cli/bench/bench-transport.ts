// The protocol `herd bench` speaks (-i http|grpc): the control calls around a run (metadata, config,
// stats, shared memory registration) and the load path (a request encoded once, a pool per level).
import type { InferInput, InferOptions, InferResult, ModelConfigDocument, ModelMetadata, ModelStatistics } from '../../client/kserve-types.ts';
import type { ExchangePool } from './timed-exchange.ts';

export interface BenchTransport<R extends { readonly body: Buffer }> {
  readonly protocol: 'http' | 'grpc';
  /** Where the server is, for messages. */
  readonly where: string;
  serverLive(): Promise<boolean>;
  modelReady(model: string, version?: string): Promise<boolean>;
  modelMetadata(model: string, version?: string): Promise<ModelMetadata>;
  modelConfig(model: string, version?: string): Promise<ModelConfigDocument>;
  modelStatistics(model: string, version?: string): Promise<ModelStatistics[]>;
  infer(model: string, inputs: readonly InferInput[], options: InferOptions): Promise<InferResult>;
  registerSystemSharedMemory(name: string, key: string, byteSize: number): Promise<void>;
  unregisterSystemSharedMemory(name: string): Promise<void>;
  prepareInfer(model: string, inputs: readonly InferInput[], options: InferOptions): R;
  /** A fresh pool for one load level: `connections` as the level needs them. */
  openPool(connections: number): ExchangePool<R>;
  destroy(): Promise<void>;
}
