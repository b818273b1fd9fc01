// Anthropic's Message Batches as an UpstreamBatchClient: one POST /v1/messages/batches carries every request
// (streamed as it is built, within the documented 100,000 requests / 256 MB); results are a JSONL download.
import type { AbortLink } from '../../../core/abort-link.ts';
import { HerdError } from '../../../core/errors.ts';
import { isJsonObject } from '../../protocol/check-json-value.ts';
import type { AnthropicUsage } from '../../wire/anthropic-messages/anthropic-types.ts';
import { convertAnthropicUsage } from '../../wire/anthropic-messages/convert-anthropic-usage.ts';
import { parseAnthropicErrorBody } from '../../wire/anthropic-messages/map-anthropic-error.ts';
import { type BatchBodyCount, encodeBatchBody } from '../encode-batch-body.ts';
import { HttpUpstream } from '../http-upstream.ts';
import { DEFAULT_TIMEOUT_MS, type ProviderOptions } from '../provider-options.ts';
import { readBatchJsonl } from '../read-batch-jsonl.ts';
import type {
  UpstreamBatchClient,
  UpstreamBatchCreated,
  UpstreamBatchLimits,
  UpstreamBatchPhase,
  UpstreamBatchResult,
  UpstreamBatchStatus,
  UpstreamBatchSubmission,
} from '../upstream-batch-client.ts';
import { ANTHROPIC_VERSION } from './anthropic-api-version.ts';

/** Anthropic's documented ceiling for one Message Batch: 100,000 requests or 256 MB, whichever comes first. */
export const ANTHROPIC_BATCH_LIMITS: UpstreamBatchLimits = { maxLines: 100_000, maxBytes: 256 * 1024 * 1024 };
const BATCHES_PATH = '/v1/messages/batches';
const DEFAULT_UPLOAD_TIMEOUT_MS = 10 * 60_000;
const CUSTOM_ID = { pattern: /^[a-zA-Z0-9_-]{1,64}$/, description: 'Anthropic’s ^[a-zA-Z0-9_-]{1,64}$' };

/** The HTTP status an errored result's error type stands for (Anthropic's error types by their documented status). */
const STATUS_BY_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

export interface AnthropicBatchClientOptions extends ProviderOptions {
  /** Lower than Anthropic's own to keep batches smaller; never above them. */
  limits?: Partial<UpstreamBatchLimits>;
  /** The whole create call (it carries every request); the other calls take `timeoutMs`. */
  uploadTimeoutMs?: number;
}

export function createAnthropicBatchClient(options: AnthropicBatchClientOptions): UpstreamBatchClient {
  return new AnthropicBatchClient(options);
}

class AnthropicBatchClient implements UpstreamBatchClient {
  readonly limits: UpstreamBatchLimits;
  private readonly upstream: HttpUpstream;
  private readonly name: string;
  private readonly baseUrl: string;
  private readonly uploadTimeoutMs: number;

  constructor(options: AnthropicBatchClientOptions) {
    this.name = options.name;
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.limits = {
      maxLines: Math.min(options.limits?.maxLines ?? Number.POSITIVE_INFINITY, ANTHROPIC_BATCH_LIMITS.maxLines),
      maxBytes: Math.min(options.limits?.maxBytes ?? Number.POSITIVE_INFINITY, ANTHROPIC_BATCH_LIMITS.maxBytes),
    };
    this.uploadTimeoutMs = options.uploadTimeoutMs ?? DEFAULT_UPLOAD_TIMEOUT_MS;
    this.upstream = new HttpUpstream({
      provider: options.name,
      baseUrl: options.baseUrl,
      headers: { ...options.headers, 'x-api-key': options.apiKey, 'anthropic-version': ANTHROPIC_VERSION },
      secrets: [options.apiKey],
      parseErrorBody: parseAnthropicErrorBody,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      connections: options.connections,
    });
  }

  async submit(submission: UpstreamBatchSubmission): Promise<UpstreamBatchCreated> {
    const count: BatchBodyCount = { lines: 0, bytes: 0 };
    const body = encodeBatchBody(
      submission.lines,
      { head: '{"requests":[', separator: ',', terminator: '', tail: ']}', wrap: (line) => ({ custom_id: line.customId, params: line.body }) },
      this.limits,
      count,
      this.name,
      CUSTOM_ID,
    );
    const created = await this.upstream.exchangeJson({
      method: 'POST',
      path: BATCHES_PATH,
      body,
      contentType: 'application/json',
      signal: submission.signal,
      timeoutMs: this.uploadTimeoutMs,
    });
    return { id: this.readStatus(created).id, lines: count.lines, bytes: count.bytes };
  }

  async poll(id: string, signal: AbortLink): Promise<UpstreamBatchStatus> {
    return this.readStatus(await this.upstream.exchangeJson({ method: 'GET', path: `${BATCHES_PATH}/${encodeURIComponent(id)}`, signal }));
  }

  async cancel(id: string, signal: AbortLink): Promise<UpstreamBatchStatus> {
    return this.readStatus(await this.upstream.exchangeJson({ method: 'POST', path: `${BATCHES_PATH}/${encodeURIComponent(id)}/cancel`, signal }));
  }

  async *results(id: string, signal: AbortLink): AsyncGenerator<UpstreamBatchResult> {
    const batch = await this.upstream.exchangeJson({ method: 'GET', path: `${BATCHES_PATH}/${encodeURIComponent(id)}`, signal });
    const status = this.readStatus(batch);
    const url = isJsonObject(batch) ? batch.results_url : undefined;
    if (status.phase !== 'ended' || typeof url !== 'string') {
      throw new HerdError('INVALID_ARG', `${this.name}: batch ${id} has no results yet (processing_status ${status.upstreamStatus})`);
    }
    const chunks = this.upstream.exchangeStream({ method: 'GET', path: this.resultsPath(id, url), signal });
    for await (const line of readBatchJsonl(chunks, this.upstream, `results of ${id}`)) yield this.readResult(line);
  }

  /** Anthropic keeps no metadata on a Message Batch: a batch cannot be found again by Herd's own id. */
  async findByMetadata(): Promise<string | undefined> {
    return undefined;
  }

  close(): Promise<void> {
    return this.upstream.close();
  }

  /**
   * The batch's results_url, as Anthropic asks (the path may change), when it is under the configured base
   * URL; anywhere else the key must not go, so the documented path is used instead.
   */
  private resultsPath(id: string, url: string): string {
    if (url.startsWith(`${this.baseUrl}/`)) return url.slice(this.baseUrl.length);
    return `${BATCHES_PATH}/${encodeURIComponent(id)}/results`;
  }

  private readStatus(body: unknown): UpstreamBatchStatus {
    if (!isJsonObject(body) || body.type !== 'message_batch' || typeof body.id !== 'string' || typeof body.processing_status !== 'string') {
      throw this.upstream.malformed('response is not a message_batch');
    }
    const phase = PHASE_BY_STATUS[body.processing_status];
    if (phase === undefined) throw this.upstream.malformed(`unknown processing_status '${this.upstream.safe(body.processing_status)}'`);
    const counts = isJsonObject(body.request_counts) ? body.request_counts : {};
    const processing = numberOr(counts.processing);
    const succeeded = numberOr(counts.succeeded);
    const errored = numberOr(counts.errored);
    const canceled = numberOr(counts.canceled);
    const expired = numberOr(counts.expired);
    const status: UpstreamBatchStatus = {
      id: body.id,
      phase,
      upstreamStatus: body.processing_status,
      counts: { total: processing + succeeded + errored + canceled + expired, processing, succeeded, errored, canceled, expired },
    };
    const expiresAt = typeof body.expires_at === 'string' ? Date.parse(body.expires_at) : Number.NaN;
    if (Number.isFinite(expiresAt)) status.expiresAt = expiresAt;
    return status;
  }

  /** One results line: `{custom_id, result: {type: succeeded, message} | {type: errored, error} | {type: canceled|expired}}`. */
  private readResult(line: unknown): UpstreamBatchResult {
    if (!isJsonObject(line) || typeof line.custom_id !== 'string' || !isJsonObject(line.result)) throw this.upstream.malformed('a batch result line has no custom_id or result');
    const customId = line.custom_id;
    const result = line.result;
    if (result.type === 'succeeded' && isJsonObject(result.message)) {
      const usage = isJsonObject(result.message.usage) ? convertAnthropicUsage(result.message.usage as AnthropicUsage) : undefined;
      return { customId, outcome: 'succeeded', statusCode: 200, body: result.message, usage };
    }
    if (result.type === 'canceled' || result.type === 'expired') {
      return { customId, outcome: result.type, error: { type: result.type, message: `the request was ${result.type} before it ran` } };
    }
    if (result.type !== 'errored') throw this.upstream.malformed(`unknown result type '${this.upstream.safe(String(result.type))}'`);
    const body = isJsonObject(result.error) ? result.error : {};
    const details = parseAnthropicErrorBody(body);
    const type = details.type ?? 'api_error';
    return { customId, outcome: 'errored', statusCode: STATUS_BY_TYPE[type] ?? 500, body, error: { type, message: this.upstream.safe(details.message ?? type) } };
  }
}

const PHASE_BY_STATUS: Record<string, UpstreamBatchPhase> = { in_progress: 'running', canceling: 'cancelling', ended: 'ended' };

function numberOr(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}
