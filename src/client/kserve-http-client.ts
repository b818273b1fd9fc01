// A small KServe v2 HTTP client on one undici Pool (keep-alive connections): health, metadata,
// config, statistics and infer, with errors as HerdError carrying the server's own message.
import { Pool, type Dispatcher } from 'undici';
import { INFERENCE_HEADER_CONTENT_LENGTH } from '../core/codecs/kserve-infer-request.ts';
import { internal } from '../core/errors.ts';
import { createHttpError, createTransportError } from './create-http-error.ts';
import { createInferRequestBody } from './encode-infer-request.ts';
import type { InferInput, InferOptions, InferResult, ModelConfigDocument, ModelMetadata, ModelStatistics, ServerMetadata } from './kserve-types.ts';
import { parseInferResponseBody } from './parse-infer-response.ts';
import { parseServerUrl } from './parse-server-url.ts';
import { TimedInferExchange, type ExchangeListener, type PreparedInferRequest } from './timed-infer-exchange.ts';

export interface KserveHttpClientOptions {
  /** "host:port" or "http://host:port". */
  url: string;
  /** Most connections the pool opens; default: as many as there are concurrent requests. */
  connections?: number;
  /** Requests in flight per connection (default 1, as tritonclient and browsers do). */
  pipelining?: number;
  /** Headers sent with every request (e.g. an Authorization header). */
  headers?: Record<string, string>;
}

const LOWER_HEADER_LENGTH = INFERENCE_HEADER_CONTENT_LENGTH.toLowerCase();

export class KserveHttpClient {
  /** The server's origin, e.g. "http://localhost:8000". */
  readonly origin: string;
  private readonly pool: Pool;
  private readonly headers: Record<string, string>;

  constructor(options: KserveHttpClientOptions) {
    this.origin = parseServerUrl(options.url);
    this.pool = new Pool(this.origin, {
      connections: options.connections ?? null,
      pipelining: options.pipelining ?? 1,
    });
    this.headers = { ...options.headers };
  }

  /** GET /v2/health/live: true on 200. A server that cannot be reached is an UNAVAILABLE error, not false. */
  async serverLive(): Promise<boolean> {
    return (await this.get('/v2/health/live', 'server liveness', true)).statusCode === 200;
  }

  async serverReady(): Promise<boolean> {
    return (await this.get('/v2/health/ready', 'server readiness', true)).statusCode === 200;
  }

  async modelReady(model: string, version?: string): Promise<boolean> {
    return (await this.get(`${modelPath(model, version)}/ready`, `readiness of model '${model}'`, true)).statusCode === 200;
  }

  async serverMetadata(): Promise<ServerMetadata> {
    const value = parseJsonObject((await this.get('/v2', 'server metadata')).body, 'server metadata');
    return value as unknown as ServerMetadata;
  }

  async modelMetadata(model: string, version?: string): Promise<ModelMetadata> {
    const value = parseJsonObject((await this.get(modelPath(model, version), `metadata of model '${model}'`)).body, 'model metadata');
    if (!Array.isArray(value['inputs']) || !Array.isArray(value['outputs'])) {
      throw internal(`malformed metadata for model '${model}': 'inputs' and 'outputs' must be arrays`);
    }
    return value as unknown as ModelMetadata;
  }

  async modelConfig(model: string, version?: string): Promise<ModelConfigDocument> {
    const value = parseJsonObject((await this.get(`${modelPath(model, version)}/config`, `config of model '${model}'`)).body, 'model config');
    if (typeof value['max_batch_size'] !== 'number' || !Array.isArray(value['input'])) {
      throw internal(`malformed config for model '${model}': expected 'max_batch_size' and 'input'`);
    }
    return value as unknown as ModelConfigDocument;
  }

  /** GET /v2/models[/{m}[/versions/{v}]]/stats: one entry per model version. */
  async modelStatistics(model?: string, version?: string): Promise<ModelStatistics[]> {
    const path = model === undefined ? '/v2/models/stats' : `${modelPath(model, version)}/stats`;
    const value = parseJsonObject((await this.get(path, 'model statistics')).body, 'model statistics');
    if (!Array.isArray(value['model_stats'])) throw internal("malformed statistics: 'model_stats' must be an array");
    return value['model_stats'] as ModelStatistics[];
  }

  /** POST /v2/systemsharedmemory/region/{name}/register: a region the client made under /dev/shm. */
  async registerSystemSharedMemory(name: string, key: string, byteSize: number, offset = 0): Promise<void> {
    await this.post(`/v2/systemsharedmemory/region/${encodeURIComponent(name)}/register`, { key, offset, byte_size: byteSize }, `registering shared memory region '${name}'`);
  }

  /** Unregisters one region, or every region without a name. */
  async unregisterSystemSharedMemory(name = ''): Promise<void> {
    const path = name === '' ? '/v2/systemsharedmemory/unregister' : `/v2/systemsharedmemory/region/${encodeURIComponent(name)}/unregister`;
    await this.post(path, undefined, `unregistering shared memory region '${name}'`);
  }

  /** One inference; inputs travel as binary data unless `binaryInputs: false`. */
  async infer(model: string, inputs: readonly InferInput[], options: InferOptions = {}): Promise<InferResult> {
    const prepared = this.prepareInfer(model, inputs, options);
    const answer = await this.exchange({ ...prepared.dispatchOptions }, `inference on model '${model}'`);
    if (answer.statusCode !== 200) throw createHttpError(answer.statusCode, answer.body, `inference on model '${model}'`);
    const header = answer.headers[LOWER_HEADER_LENGTH];
    const headerLength = header === undefined ? undefined : Number(Array.isArray(header) ? header[0] : header);
    const inRegions = options.outputs?.filter((o) => o.sharedMemory !== undefined).map((o) => o.name);
    return parseInferResponseBody(answer.body, headerLength, inRegions === undefined || inRegions.length === 0 ? undefined : new Set(inRegions));
  }

  /** Encodes an infer request once, for sending many times with a TimedInferExchange. */
  prepareInfer(model: string, inputs: readonly InferInput[], options: InferOptions = {}): PreparedInferRequest {
    const { body, headerLength, contentType } = createInferRequestBody(inputs, {
      ...(options.id === undefined ? {} : { id: options.id }),
      binaryInputs: options.binaryInputs ?? true,
      binaryOutputs: options.binaryOutputs ?? true,
      ...(options.outputs === undefined ? {} : { outputs: options.outputs }),
      ...(options.parameters === undefined ? {} : { parameters: options.parameters }),
      ...(options.inputsInSharedMemory === undefined ? {} : { inputsInSharedMemory: options.inputsInSharedMemory }),
    });
    const headers: Record<string, string> = { ...this.headers, 'content-type': contentType };
    if (headerLength !== undefined) headers[LOWER_HEADER_LENGTH] = String(headerLength);
    return {
      model,
      version: options.version,
      body,
      headerLength,
      dispatchOptions: { path: `${modelPath(model, options.version)}/infer`, method: 'POST', headers, body },
    };
  }

  /** A reusable exchange on this client's pool; `onDone` runs after each send completes or fails. */
  createTimedExchange(onDone: ExchangeListener): TimedInferExchange {
    return new TimedInferExchange(this.pool, this.origin, onDone);
  }

  /** Closes idle connections and waits for requests in flight. */
  async close(): Promise<void> {
    await this.pool.close();
  }

  /** Drops every connection at once, failing requests in flight (for stopping a load generator). */
  async destroy(): Promise<void> {
    await this.pool.destroy();
  }

  private async get(path: string, what: string, anyStatus = false): Promise<Answer> {
    const answer = await this.exchange({ path, method: 'GET', headers: this.headers }, what);
    if (!anyStatus && answer.statusCode !== 200) throw createHttpError(answer.statusCode, answer.body, what);
    return answer;
  }

  private async post(path: string, document: unknown, what: string): Promise<Answer> {
    const body = document === undefined ? '' : JSON.stringify(document);
    const answer = await this.exchange({ path, method: 'POST', headers: { ...this.headers, 'content-type': 'application/json' }, body }, what);
    if (answer.statusCode !== 200) throw createHttpError(answer.statusCode, answer.body, what);
    return answer;
  }

  private async exchange(options: Dispatcher.RequestOptions, what: string): Promise<Answer> {
    let response: Dispatcher.ResponseData;
    try {
      response = await this.pool.request(options);
    } catch (err) {
      throw createTransportError(err, this.origin);
    }
    try {
      const body = Buffer.from(await response.body.arrayBuffer());
      return { statusCode: response.statusCode, headers: response.headers, body };
    } catch (err) {
      throw createTransportError(err, `${this.origin} (reading the answer to ${what})`);
    }
  }
}

interface Answer {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function modelPath(model: string, version: string | undefined): string {
  const base = `/v2/models/${encodeURIComponent(model)}`;
  return version === undefined || version === '' ? base : `${base}/versions/${encodeURIComponent(version)}`;
}

function parseJsonObject(body: Buffer, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw internal(`malformed ${what}: the server's answer is not JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw internal(`malformed ${what}: expected a JSON object`);
  return value as Record<string, unknown>;
}
