// OpenAI's Batch API as an UpstreamBatchClient: the lines stream up as a JSONL file (POST /files, multipart,
// purpose=batch), then POST /batches names it; results are the output and error files, read line by line.
import { randomUUID } from 'node:crypto';
import type { AbortLink } from '../../../core/abort-link.ts';
import { HerdError } from '../../../core/errors.ts';
import type { Usage } from '../../protocol/chat-types.ts';
import { isJsonObject, type JsonObject } from '../../protocol/check-json-value.ts';
import { convertOpenAIUsage } from '../../wire/openai-chat/convert-openai-usage.ts';
import { parseOpenAIErrorBody } from '../../wire/openai-chat/parse-openai-error.ts';
import { convertResponsesUsage } from '../../wire/openai-responses/convert-responses-to-chat.ts';
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

/** OpenAI's documented ceiling for one batch's input file: 50,000 requests, 200 MB. */
export const OPENAI_BATCH_LIMITS: UpstreamBatchLimits = { maxLines: 50_000, maxBytes: 200 * 1024 * 1024 };
const DEFAULT_UPLOAD_TIMEOUT_MS = 10 * 60_000;
/** How far back findByMetadata() looks: a crash-recovery lookup concerns the newest batches. */
const FIND_PAGES = 5;

export interface OpenAIBatchClientOptions extends ProviderOptions {
  /** Lower than OpenAI's own to keep batches smaller; never above them. */
  limits?: Partial<UpstreamBatchLimits>;
  /** The whole upload of the input file; the other calls take `timeoutMs`. */
  uploadTimeoutMs?: number;
}

export function createOpenAIBatchClient(options: OpenAIBatchClientOptions): UpstreamBatchClient {
  return new OpenAIBatchClient(options);
}

class OpenAIBatchClient implements UpstreamBatchClient {
  readonly limits: UpstreamBatchLimits;
  private readonly upstream: HttpUpstream;
  private readonly name: string;
  private readonly uploadTimeoutMs: number;

  constructor(options: OpenAIBatchClientOptions) {
    this.name = options.name;
    this.limits = {
      maxLines: Math.min(options.limits?.maxLines ?? Number.POSITIVE_INFINITY, OPENAI_BATCH_LIMITS.maxLines),
      maxBytes: Math.min(options.limits?.maxBytes ?? Number.POSITIVE_INFINITY, OPENAI_BATCH_LIMITS.maxBytes),
    };
    this.uploadTimeoutMs = options.uploadTimeoutMs ?? DEFAULT_UPLOAD_TIMEOUT_MS;
    this.upstream = new HttpUpstream({
      provider: options.name,
      baseUrl: options.baseUrl,
      headers: { ...options.headers, authorization: `Bearer ${options.apiKey}` },
      secrets: [options.apiKey],
      parseErrorBody: parseOpenAIErrorBody,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      connections: options.connections,
    });
  }

  async submit(submission: UpstreamBatchSubmission): Promise<UpstreamBatchCreated> {
    const endpoint = submission.endpoint ?? '/v1/chat/completions';
    const boundary = `herd-batch-${randomUUID()}`;
    const count: BatchBodyCount = { lines: 0, bytes: 0 };
    const head =
      `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="herd-batch.jsonl"\r\nContent-Type: application/jsonl\r\n\r\n`;
    const body = encodeBatchBody(
      submission.lines,
      { head, separator: '', terminator: '\n', tail: `\r\n--${boundary}--\r\n`, wrap: (line) => ({ custom_id: line.customId, method: 'POST', url: endpoint, body: line.body }) },
      this.limits,
      count,
      this.name,
    );
    const file = await this.upstream.exchangeJson({
      method: 'POST',
      path: '/files',
      body,
      contentType: `multipart/form-data; boundary=${boundary}`,
      signal: submission.signal,
      timeoutMs: this.uploadTimeoutMs,
    });
    const inputFileId = this.readId(file, 'file');
    await submission.onInputUploaded?.(inputFileId);
    const created = await this.upstream.exchangeJson({
      method: 'POST',
      path: '/batches',
      body: JSON.stringify({ input_file_id: inputFileId, endpoint, completion_window: '24h', metadata: submission.metadata ?? null }),
      contentType: 'application/json',
      signal: submission.signal,
    });
    return { id: this.readId(created, 'batch'), inputFileId, lines: count.lines, bytes: count.bytes };
  }

  async poll(id: string, signal: AbortLink): Promise<UpstreamBatchStatus> {
    return this.readStatus(await this.upstream.exchangeJson({ method: 'GET', path: `/batches/${encodeURIComponent(id)}`, signal }));
  }

  async cancel(id: string, signal: AbortLink): Promise<UpstreamBatchStatus> {
    return this.readStatus(await this.upstream.exchangeJson({ method: 'POST', path: `/batches/${encodeURIComponent(id)}/cancel`, signal }));
  }

  async *results(id: string, signal: AbortLink): AsyncGenerator<UpstreamBatchResult> {
    const batch = await this.upstream.exchangeJson({ method: 'GET', path: `/batches/${encodeURIComponent(id)}`, signal });
    const status = this.readStatus(batch);
    if (status.phase !== 'ended') throw new HerdError('INVALID_ARG', `${this.name}: batch ${id} has no results yet (status ${status.upstreamStatus})`);
    for (const field of ['output_file_id', 'error_file_id'] as const) {
      const fileId = isJsonObject(batch) ? batch[field] : undefined;
      if (typeof fileId !== 'string' || fileId === '') continue;
      const chunks = this.upstream.exchangeStream({ method: 'GET', path: `/files/${encodeURIComponent(fileId)}/content`, signal });
      for await (const line of readBatchJsonl(chunks, this.upstream, `${field} ${fileId}`)) yield this.readResult(line);
    }
  }

  async findByMetadata(key: string, value: string, signal: AbortLink): Promise<string | undefined> {
    let after: string | undefined;
    for (let page = 0; page < FIND_PAGES; page++) {
      const query = `?limit=100${after === undefined ? '' : `&after=${encodeURIComponent(after)}`}`;
      const list = await this.upstream.exchangeJson({ method: 'GET', path: `/batches${query}`, signal });
      if (!isJsonObject(list) || !Array.isArray(list.data)) throw this.upstream.malformed('batch list has no data array');
      for (const batch of list.data) {
        if (isJsonObject(batch) && isJsonObject(batch.metadata) && batch.metadata[key] === value && typeof batch.id === 'string') return batch.id;
      }
      const last = list.data.at(-1);
      if (list.has_more !== true || !isJsonObject(last) || typeof last.id !== 'string') return undefined;
      after = last.id;
    }
    return undefined;
  }

  close(): Promise<void> {
    return this.upstream.close();
  }

  private readId(body: unknown, object: 'file' | 'batch'): string {
    if (isJsonObject(body) && typeof body.id === 'string' && body.id !== '') return body.id;
    throw this.upstream.malformed(`the ${object} object has no id`);
  }

  private readStatus(body: unknown): UpstreamBatchStatus {
    if (!isJsonObject(body) || typeof body.id !== 'string' || typeof body.status !== 'string') throw this.upstream.malformed('response is not a batch object');
    const phase = PHASE_BY_STATUS[body.status];
    if (phase === undefined) throw this.upstream.malformed(`unknown batch status '${this.upstream.safe(body.status)}'`);
    const counts = isJsonObject(body.request_counts) ? body.request_counts : {};
    const total = numberOr(counts.total);
    const succeeded = numberOr(counts.completed);
    const errored = numberOr(counts.failed);
    const status: UpstreamBatchStatus = {
      id: body.id,
      phase,
      upstreamStatus: body.status,
      counts: { total, succeeded, errored, processing: phase === 'ended' ? 0 : Math.max(0, total - succeeded - errored), canceled: 0, expired: 0 },
    };
    if (typeof body.expires_at === 'number') status.expiresAt = body.expires_at * 1000;
    if (isJsonObject(body.errors) && Array.isArray(body.errors.data)) status.errors = body.errors.data.map((e) => this.describeBatchError(e));
    if (isJsonObject(body.metadata)) status.metadata = stringFields(body.metadata);
    return status;
  }

  private describeBatchError(error: unknown): string {
    if (!isJsonObject(error)) return 'unknown error';
    const line = typeof error.line === 'number' ? `line ${error.line}: ` : '';
    return this.upstream.safe(`${line}${typeof error.message === 'string' ? error.message : String(error.code ?? 'unknown error')}`);
  }

  /** One line of an output or error file: `{id, custom_id, response: {status_code, request_id, body} | null, error}`. */
  private readResult(line: unknown): UpstreamBatchResult {
    if (!isJsonObject(line) || typeof line.custom_id !== 'string') throw this.upstream.malformed('a batch result line has no custom_id');
    const customId = line.custom_id;
    const response = isJsonObject(line.response) ? line.response : undefined;
    if (response !== undefined && typeof response.status_code === 'number') {
      const statusCode = response.status_code;
      const body = isJsonObject(response.body) ? response.body : {};
      if (statusCode < 400) return { customId, outcome: 'succeeded', statusCode, body, usage: readUsage(body.usage) };
      const details = parseOpenAIErrorBody(body);
      return { customId, outcome: 'errored', statusCode, body, error: { type: details.type ?? 'error', message: this.upstream.safe(details.message ?? `HTTP ${statusCode}`) } };
    }
    const error = isJsonObject(line.error) ? line.error : {};
    const type = typeof error.code === 'string' ? error.code : 'error';
    const message = this.upstream.safe(typeof error.message === 'string' ? error.message : 'no response');
    if (type === 'batch_expired') return { customId, outcome: 'expired', error: { type, message } };
    if (type === 'batch_cancelled') return { customId, outcome: 'canceled', error: { type, message } };
    return { customId, outcome: 'errored', statusCode: 500, error: { type, message } };
  }
}

const PHASE_BY_STATUS: Record<string, UpstreamBatchPhase> = {
  validating: 'running',
  in_progress: 'running',
  finalizing: 'running',
  cancelling: 'cancelling',
  completed: 'ended',
  expired: 'ended',
  cancelled: 'ended',
  failed: 'failed',
};

/** Chat and completions usage, Responses usage, or embeddings' prompt-only usage. */
function readUsage(raw: unknown): Usage | undefined {
  const usage = convertOpenAIUsage(raw) ?? convertResponsesUsage(raw);
  if (usage !== undefined || !isJsonObject(raw) || typeof raw.prompt_tokens !== 'number') return usage;
  return { promptTokens: raw.prompt_tokens, cachedPromptTokens: 0, cacheWriteTokens: 0, completionTokens: 0, reasoningTokens: 0, estimated: false, raw };
}

function numberOr(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

function stringFields(object: JsonObject): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(object)) if (typeof value === 'string') out[key] = value;
  return out;
}
