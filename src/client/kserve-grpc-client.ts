// A KServe v2 gRPC client (Triton's GRPCInferenceService) with the HTTP client's API: inputs go as
// raw_input_contents (as tritonclient sends them), outputs come back from raw_output_contents by position.
import {
  credentials,
  loadPackageDefinition,
  Metadata,
  type Client,
  type ClientDuplexStream,
  type GrpcObject,
  type ServiceClientConstructor,
  type ServiceError,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { fileURLToPath } from 'node:url';
import { convertTensorDataToBinary, parseBinaryTensorData } from '../core/codecs/kserve-binary-tensor.ts';
import { isDataType } from '../core/datatype.ts';
import { HerdError, internal } from '../core/errors.ts';
import { allocateTensorData, elementCount, type ParameterValue, type Parameters, type Tensor } from '../core/tensor.ts';
import { createGrpcError } from './create-grpc-error.ts';
import type { InferInput, InferOptions, InferResult, ModelMetadata, ModelStatistics, SharedMemoryPlacement, ServerMetadata } from './kserve-types.ts';
import { TimedGrpcInferExchange, type GrpcExchangeListener, type PreparedGrpcInferRequest } from './timed-grpc-infer-exchange.ts';

export interface KserveGrpcClientOptions {
  /** "host:port" (a leading grpc:// or http:// is ignored). */
  url: string;
  /** Metadata (headers) sent with every call. */
  headers?: Record<string, string>;
  /** Open a connection of its own instead of sharing grpc-js's process-wide one to the same address. */
  ownConnection?: boolean;
}

type Message = Record<string, unknown>;
type InferParameter = Record<string, unknown> & { parameter_choice?: string };

/** One event of a stream: a result, or the in-stream error a failed request answers with. */
export interface StreamInferEvent {
  /** The request's id (also on a failed request's answer). */
  id: string;
  result?: InferResult;
  error?: HerdError;
  /** The response's `triton_final_response` (true for ordinary models). */
  final: boolean;
}

export interface InferStream {
  send(model: string, inputs: readonly InferInput[], options?: InferOptions): void;
  /** Half-closes the stream: the server answers what it has, then ends it. */
  end(): void;
  /** Drops the stream (cancels the call). */
  cancel(): void;
  /** Responses in order; ends when the server ends the stream, throws when it ends with an error status. */
  responses: AsyncIterable<StreamInferEvent>;
}

const INT32_MAX = 2 ** 31 - 1;
let serviceClass: ServiceClientConstructor | undefined;

function loadService(): ServiceClientConstructor {
  if (serviceClass) return serviceClass;
  const definition = loadSync(['grpc_service.proto'], {
    keepCase: true,
    longs: String,
    enums: String,
    bytes: Buffer,
    defaults: true,
    oneofs: true,
    includeDirs: [fileURLToPath(new URL('../grpc/protos/', import.meta.url))],
  });
  serviceClass = (loadPackageDefinition(definition)['inference'] as GrpcObject)['GRPCInferenceService'] as ServiceClientConstructor;
  return serviceClass;
}

export class KserveGrpcClient {
  readonly address: string;
  private readonly client: Client & Record<string, (...args: unknown[]) => unknown>;
  private readonly metadata: Metadata;

  constructor(options: KserveGrpcClientOptions) {
    this.address = options.url.replace(/^(grpc|http):\/\//, '');
    const Service = loadService();
    this.client = new Service(this.address, credentials.createInsecure(), {
      'grpc.max_receive_message_length': INT32_MAX,
      'grpc.max_send_message_length': INT32_MAX,
      ...(options.ownConnection === true ? { 'grpc.use_local_subchannel_pool': 1 } : {}),
    }) as unknown as KserveGrpcClient['client'];
    this.metadata = new Metadata();
    for (const [k, v] of Object.entries(options.headers ?? {})) this.metadata.set(k, v);
  }

  /** Any unary RPC of the service by name, message in and out as proto-loader shapes them. */
  rpc<T = Message>(method: string, request: Message = {}, metadata?: Record<string, string>): Promise<T> {
    const md = this.metadata.clone();
    for (const [k, v] of Object.entries(metadata ?? {})) md.set(k, v);
    return new Promise((resolve, reject) => {
      const fn = this.client[method];
      if (typeof fn !== 'function') {
        reject(internal(`no RPC named '${method}'`));
        return;
      }
      fn.call(this.client, request, md, (err: ServiceError | null, response: T) => (err ? reject(createGrpcError(err)) : resolve(response)));
    });
  }

  async serverLive(): Promise<boolean> {
    return (await this.rpc<{ live: boolean }>('ServerLive')).live;
  }
  async serverReady(): Promise<boolean> {
    return (await this.rpc<{ ready: boolean }>('ServerReady')).ready;
  }
  async modelReady(model: string, version?: string): Promise<boolean> {
    return (await this.rpc<{ ready: boolean }>('ModelReady', { name: model, version: version ?? '' })).ready;
  }
  serverMetadata(): Promise<ServerMetadata> {
    return this.rpc<ServerMetadata>('ServerMetadata');
  }
  async modelMetadata(model: string, version?: string): Promise<ModelMetadata> {
    const m = await this.rpc<ModelMetadata & { inputs: { shape: (string | number)[] }[]; outputs: { shape: (string | number)[] }[] }>('ModelMetadata', {
      name: model,
      version: version ?? '',
    });
    const dims = (t: { shape: (string | number)[] }) => ({ ...t, shape: t.shape.map(Number) });
    return { ...m, inputs: m.inputs.map(dims), outputs: m.outputs.map(dims) } as ModelMetadata;
  }
  /** The ModelConfig message (proto field names; 64-bit integers as decimal strings). */
  async modelConfig(model: string, version?: string): Promise<Message> {
    return (await this.rpc<{ config: Message }>('ModelConfig', { name: model, version: version ?? '' })).config;
  }
  async modelStatistics(model?: string, version?: string): Promise<ModelStatistics[]> {
    return (await this.rpc<{ model_stats: ModelStatistics[] }>('ModelStatistics', { name: model ?? '', version: version ?? '' })).model_stats;
  }
  async repositoryIndex(ready = false): Promise<{ name: string; version: string; state: string; reason: string }[]> {
    return (await this.rpc<{ models: { name: string; version: string; state: string; reason: string }[] }>('RepositoryIndex', { ready })).models;
  }
  /** As tritonclient's load_model: `files` maps `file:<path>` to the bytes of a model file (needs `config`). */
  async loadModel(model: string, options: { config?: string; files?: Record<string, Uint8Array> } = {}): Promise<void> {
    const parameters: Record<string, Message> = {};
    if (options.config !== undefined) parameters['config'] = { string_param: options.config };
    for (const [name, bytes] of Object.entries(options.files ?? {})) parameters[name] = { bytes_param: bytes };
    await this.rpc('RepositoryModelLoad', { model_name: model, parameters });
  }
  async unloadModel(model: string): Promise<void> {
    await this.rpc('RepositoryModelUnload', { model_name: model });
  }
  async registerSystemSharedMemory(name: string, key: string, byteSize: number, offset = 0): Promise<void> {
    await this.rpc('SystemSharedMemoryRegister', { name, key, offset, byte_size: byteSize });
  }
  async unregisterSystemSharedMemory(name = ''): Promise<void> {
    await this.rpc('SystemSharedMemoryUnregister', { name });
  }
  async systemSharedMemoryStatus(name = ''): Promise<Record<string, { name: string; key: string; offset: string; byte_size: string }>> {
    return (await this.rpc<{ regions: Record<string, { name: string; key: string; offset: string; byte_size: string }> }>('SystemSharedMemoryStatus', { name })).regions;
  }

  async infer(model: string, inputs: readonly InferInput[], options: InferOptions = {}): Promise<InferResult> {
    return convertInferResponse(await this.rpc('ModelInfer', createInferRequest(model, inputs, options)));
  }

  /** Encodes a ModelInferRequest once, for sending many times with a TimedGrpcInferExchange. */
  prepareInfer(model: string, inputs: readonly InferInput[], options: InferOptions = {}): PreparedGrpcInferRequest {
    const serialize = loadService().service['ModelInfer']?.requestSerialize;
    if (serialize === undefined) throw internal('the inference service has no ModelInfer');
    return { model, version: options.version, body: serialize(createInferRequest(model, inputs, options)) };
  }

  /** A reusable exchange on this client's channel; `onDone` runs after each send completes or fails. */
  createTimedExchange(onDone: GrpcExchangeListener): TimedGrpcInferExchange {
    return new TimedGrpcInferExchange(this.client, this.metadata, onDone);
  }

  /** A ModelStreamInfer call; `headers` add metadata (e.g. `triton_grpc_error: 'true'`). */
  streamInfer(headers: Record<string, string> = {}): InferStream {
    const md = this.metadata.clone();
    for (const [k, v] of Object.entries(headers)) md.set(k, v);
    const call = (this.client['ModelStreamInfer'] as (m: Metadata) => ClientDuplexStream<Message, Message>).call(this.client, md);
    const responses = (async function* (): AsyncGenerator<StreamInferEvent> {
      try {
        for await (const message of call as AsyncIterable<Message>) {
          const error = String(message['error_message'] ?? '');
          const response = message['infer_response'] as Message | null;
          const final = (response?.['parameters'] as Record<string, InferParameter> | undefined)?.['triton_final_response']?.['bool_param'] === true;
          const id = String(response?.['id'] ?? '');
          if (error !== '') yield { id, error: new HerdError('INTERNAL', error), final };
          else if (response) yield { id, result: convertInferResponse(response), final };
        }
      } catch (err) {
        const e = err as ServiceError;
        if (e.code === 1 /* CANCELLED by us */) return;
        throw createGrpcError(e);
      }
    })();
    return {
      send: (model, inputs, options = {}) => {
        call.write(createInferRequest(model, inputs, options));
      },
      end: () => {
        call.end();
      },
      cancel: () => {
        call.cancel();
      },
      responses,
    };
  }

  close(): void {
    this.client.close();
  }

  /** Closes the channel (the HTTP client's name for it, so load generators take either). */
  async destroy(): Promise<void> {
    this.client.close();
  }
}

function createInferRequest(model: string, inputs: readonly InferInput[], options: InferOptions): Message {
  const inShm = options.inputsInSharedMemory ?? {};
  return {
    model_name: model,
    model_version: options.version ?? '',
    id: options.id ?? '',
    parameters: convertParameters(options.parameters),
    inputs: inputs.map((t) => {
      const placement = inShm[t.name];
      return { name: t.name, datatype: t.datatype, shape: t.shape, parameters: placement === undefined ? {} : convertPlacement(placement) };
    }),
    outputs: (options.outputs ?? []).map((o) => ({
      name: o.name,
      parameters: {
        ...(o.classCount ? { classification: { int64_param: o.classCount } } : {}),
        ...(o.sharedMemory === undefined ? {} : convertPlacement(o.sharedMemory)),
      },
    })),
    // Raw contents only for inputs carried in the message, in input order (the server counts them that way).
    raw_input_contents: inputs.filter((t) => inShm[t.name] === undefined).map((t) => convertTensorDataToBinary(t)),
  };
}

function convertPlacement(p: SharedMemoryPlacement): Record<string, InferParameter> {
  return {
    shared_memory_region: { string_param: p.region },
    shared_memory_offset: { int64_param: p.offset },
    shared_memory_byte_size: { int64_param: p.byteSize },
  };
}

function convertParameters(parameters: Parameters | undefined): Record<string, InferParameter> {
  const out: Record<string, InferParameter> = {};
  for (const [key, value] of Object.entries(parameters ?? {})) out[key] = convertParameter(value);
  return out;
}

function convertParameter(value: ParameterValue): InferParameter {
  if (typeof value === 'boolean') return { bool_param: value };
  if (typeof value === 'string') return { string_param: value };
  return Number.isInteger(value) ? { int64_param: value } : { double_param: value };
}

function convertInferResponse(message: Message): InferResult {
  const outputs = (message['outputs'] as { name: string; datatype: string; shape: string[] }[]) ?? [];
  const raw = (message['raw_output_contents'] as Buffer[]) ?? [];
  const parameters: Parameters = {};
  for (const [key, p] of Object.entries((message['parameters'] as Record<string, InferParameter>) ?? {})) {
    const choice = p.parameter_choice;
    if (choice === undefined) continue;
    const v = p[choice];
    parameters[key] = choice === 'int64_param' || choice === 'uint64_param' ? Number(v) : (v as ParameterValue);
  }
  const tensors = outputs.map((o, i): Tensor => {
    if (!isDataType(o.datatype)) throw internal(`malformed infer response: output '${o.name}' has datatype '${o.datatype}'`);
    const shape = o.shape.map(Number);
    const bytes = raw[i] ?? Buffer.alloc(0);
    // An output written to shared memory comes back with no contents: its data is in the region.
    if (bytes.byteLength === 0 && elementCount(shape) > 0) return { name: o.name, datatype: o.datatype, shape, data: allocateTensorData(o.datatype, 0) };
    return { name: o.name, datatype: o.datatype, shape, data: parseBinaryTensorData(bytes, { name: o.name, datatype: o.datatype, shape }) };
  });
  return {
    modelName: String(message['model_name'] ?? ''),
    modelVersion: String(message['model_version'] ?? ''),
    id: String(message['id'] ?? ''),
    parameters,
    outputs: tensors,
  };
}
