// A local upstream speaking Anthropic's Message Batches API as documented: create with the requests inline,
// retrieve, list (before_id / after_id / limit), cancel, delete, and the JSONL results at `results_url`.
// Batches stay `in_progress` until the test advances them (or a tick does), then end with one result per request.
import type { IncomingMessage } from 'node:http';
import { fakeAnthropicMessage } from './fake-batch-answers.ts';
import { type FakeCall, FakeBatchServer, type FakeReply, isObject, readJson } from './fake-batch-server.ts';

const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;
export const FAKE_ANTHROPIC_MAX_REQUESTS = 100_000;

export interface FakeAnthropicRequest {
  custom_id: string;
  params: Record<string, unknown>;
}

export interface FakeAnthropicBatch {
  wire: Record<string, unknown> & { id: string; processing_status: string };
  requests: FakeAnthropicRequest[];
  /** Results by custom_id, as the results file carries them. */
  done: Map<string, Record<string, unknown>>;
}

export interface FakeAnthropicOptions {
  /** Required as `x-api-key` (or `Authorization: Bearer`) when set; `anthropic-version` is always required. */
  apiKey?: string;
  /** End (or finish cancelling) every unfinished batch on each tick. */
  tickMs?: number;
}

export class FakeAnthropicBatches {
  readonly batches = new Map<string, FakeAnthropicBatch>();
  /** custom_id → the error type its request ends with (`invalid_request_error`, `api_error`, …). */
  readonly failing = new Map<string, string>();
  private readonly server: FakeBatchServer;
  private seq = 0;
  private timer: NodeJS.Timeout | undefined;

  private constructor(options: FakeAnthropicOptions) {
    this.server = new FakeBatchServer({
      routes: this.routes(),
      authenticate: (req) => {
        // The key as `x-api-key`, or as a Bearer token (what @anthropic-ai/sdk 1.x sends).
        const given = req.headers['x-api-key'] ?? req.headers.authorization?.replace(/^Bearer /, '');
        if (options.apiKey !== undefined && given !== options.apiKey) return anthropicError(401, 'authentication_error', 'invalid x-api-key');
        if (req.headers['anthropic-version'] === undefined) return anthropicError(400, 'invalid_request_error', 'anthropic-version: header is required');
        return undefined;
      },
      notFound: () => anthropicError(404, 'not_found_error', 'Not found'),
      rateLimited: () => anthropicError(429, 'rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit').json,
    });
  }

  static async start(options: FakeAnthropicOptions = {}): Promise<FakeAnthropicBatches> {
    const fake = new FakeAnthropicBatches(options);
    await fake.server.listen();
    if (options.tickMs !== undefined) fake.timer = setInterval(() => fake.tick(), options.tickMs);
    return fake;
  }

  /** The base URL an Anthropic client takes (the origin: paths start with /v1). */
  get baseUrl(): string {
    return this.server.url;
  }

  get calls(): readonly FakeCall[] {
    return this.server.calls;
  }

  rejectCreates(count: number, retryAfterSeconds = 7): void {
    this.server.throttle('create', count, retryAfterSeconds);
  }

  failRequests(customIds: Iterable<string>, type = 'invalid_request_error'): void {
    for (const id of customIds) this.failing.set(id, type);
  }

  /** Answers the next `count` unanswered requests (partial progress before a cancel or expiry). */
  progress(id: string, count: number): void {
    const batch = this.get(id);
    let left = count;
    for (const request of batch.requests) {
      if (left === 0) break;
      if (batch.done.has(request.custom_id)) continue;
      batch.done.set(request.custom_id, this.answer(request));
      left--;
    }
    this.count(batch);
  }

  /** in_progress: every request answered, then `ended`; canceling: the unanswered ones `canceled`, then `ended`. */
  advance(id: string): string {
    const batch = this.get(id);
    const status = batch.wire.processing_status;
    if (status === 'in_progress') this.progress(id, batch.requests.length);
    if (status !== 'ended') this.end(batch, status === 'canceling' ? 'canceled' : 'expired');
    return batch.wire.processing_status;
  }

  /** The 24 h window ran out: answered requests keep their results, the rest are `expired`. */
  expire(id: string): void {
    const batch = this.get(id);
    if (batch.wire.processing_status !== 'ended') this.end(batch, 'expired');
  }

  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    await this.server.close();
  }

  private tick(): void {
    for (const [id, batch] of this.batches) if (batch.wire.processing_status !== 'ended') this.advance(id);
  }

  private get(id: string): FakeAnthropicBatch {
    const batch = this.batches.get(id);
    if (batch === undefined) throw new Error(`fake anthropic: no batch ${id}`);
    return batch;
  }

  private answer(request: FakeAnthropicRequest): Record<string, unknown> {
    const n = this.seq++;
    const type = this.failing.get(request.custom_id);
    if (type !== undefined) {
      return {
        custom_id: request.custom_id,
        result: { type: 'errored', error: { type: 'error', error: { type, message: `fake failure for ${request.custom_id}` }, request_id: `req_fake${n}` } },
      };
    }
    return { custom_id: request.custom_id, result: { type: 'succeeded', message: fakeAnthropicMessage(request.params, n) } };
  }

  private end(batch: FakeAnthropicBatch, unanswered: 'canceled' | 'expired'): void {
    for (const request of batch.requests) if (!batch.done.has(request.custom_id)) batch.done.set(request.custom_id, { custom_id: request.custom_id, result: { type: unanswered } });
    this.count(batch);
    Object.assign(batch.wire, { processing_status: 'ended', ended_at: iso(), results_url: `${this.server.url}/v1/messages/batches/${batch.wire.id}/results` });
  }

  private count(batch: FakeAnthropicBatch): void {
    const counts = { processing: batch.requests.length - batch.done.size, succeeded: 0, errored: 0, canceled: 0, expired: 0 };
    for (const line of batch.done.values()) {
      const type = isObject(line.result) ? String(line.result.type) : '';
      if (type === 'succeeded' || type === 'errored' || type === 'canceled' || type === 'expired') counts[type]++;
    }
    batch.wire.request_counts = counts;
  }

  private routes() {
    const one = /^\/v1\/messages\/batches\/([^/]+)$/;
    return [
      { method: 'POST', pattern: /^\/v1\/messages\/batches$/, name: 'create', handle: (_m: RegExpExecArray, req: IncomingMessage) => this.create(req) },
      { method: 'GET', pattern: /^\/v1\/messages\/batches$/, handle: (_m: RegExpExecArray, _r: IncomingMessage, url: URL) => this.list(url) },
      { method: 'GET', pattern: one, handle: (m: RegExpExecArray) => this.withBatch(m[1]!, (b) => ({ status: 200, json: b.wire })) },
      { method: 'POST', pattern: /^\/v1\/messages\/batches\/([^/]+)\/cancel$/, handle: (m: RegExpExecArray) => this.withBatch(m[1]!, (b) => this.cancel(b)) },
      { method: 'DELETE', pattern: one, handle: (m: RegExpExecArray) => this.withBatch(m[1]!, (b) => this.delete(b)) },
      { method: 'GET', pattern: /^\/v1\/messages\/batches\/([^/]+)\/results$/, handle: (m: RegExpExecArray) => this.withBatch(m[1]!, (b) => this.results(b)) },
    ];
  }

  private withBatch(id: string, reply: (batch: FakeAnthropicBatch) => FakeReply): FakeReply {
    const batch = this.batches.get(id);
    return batch === undefined ? anthropicError(404, 'not_found_error', `Message Batch ${id} not found`) : reply(batch);
  }

  private async create(req: IncomingMessage): Promise<FakeReply> {
    const body = await readJson(req);
    if (!isObject(body) || !Array.isArray(body.requests)) return anthropicError(400, 'invalid_request_error', 'requests: Field required');
    if (body.requests.length === 0 || body.requests.length > FAKE_ANTHROPIC_MAX_REQUESTS) {
      return anthropicError(400, 'invalid_request_error', `requests: must hold between 1 and ${FAKE_ANTHROPIC_MAX_REQUESTS} items`);
    }
    const requests: FakeAnthropicRequest[] = [];
    const seen = new Set<string>();
    for (const [index, request] of body.requests.entries()) {
      const customId = isObject(request) ? request.custom_id : undefined;
      const params = isObject(request) ? request.params : undefined;
      if (typeof customId !== 'string' || !CUSTOM_ID.test(customId))
        return anthropicError(400, 'invalid_request_error', `requests.${index}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`);
      if (seen.has(customId)) return anthropicError(400, 'invalid_request_error', `requests.${index}.custom_id: Duplicate custom_id '${customId}'`);
      if (!isObject(params) || typeof params.model !== 'string' || typeof params.max_tokens !== 'number' || !Array.isArray(params.messages)) {
        return anthropicError(400, 'invalid_request_error', `requests.${index}.params: model, max_tokens and messages are required`);
      }
      seen.add(customId);
      requests.push({ custom_id: customId, params });
    }
    this.seq++;
    const id = `msgbatch_fake${String(this.seq).padStart(6, '0')}`;
    const created = new Date();
    const wire = {
      id,
      type: 'message_batch',
      processing_status: 'in_progress',
      request_counts: { processing: requests.length, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
      ended_at: null,
      created_at: created.toISOString(),
      expires_at: new Date(created.getTime() + 24 * 3600_000).toISOString(),
      archived_at: null,
      cancel_initiated_at: null,
      results_url: null,
    };
    this.batches.set(id, { wire, requests, done: new Map() });
    return { status: 200, json: wire };
  }

  private cancel(batch: FakeAnthropicBatch): FakeReply {
    if (batch.wire.processing_status === 'in_progress') Object.assign(batch.wire, { processing_status: 'canceling', cancel_initiated_at: iso() });
    return { status: 200, json: batch.wire };
  }

  private delete(batch: FakeAnthropicBatch): FakeReply {
    if (batch.wire.processing_status !== 'ended')
      return anthropicError(400, 'invalid_request_error', `Message Batch ${batch.wire.id} cannot be deleted while it is processing; cancel it first`);
    this.batches.delete(batch.wire.id);
    return { status: 200, json: { id: batch.wire.id, type: 'message_batch_deleted' } };
  }

  private results(batch: FakeAnthropicBatch): FakeReply {
    if (batch.wire.processing_status !== 'ended') return anthropicError(400, 'invalid_request_error', `Message Batch ${batch.wire.id} has not yet ended`);
    const lines = [...batch.done.values()].map((line) => `${JSON.stringify(line)}\n`).join('');
    return { status: 200, bytes: Buffer.from(lines), contentType: 'application/binary' };
  }

  /** Newest first; `after_id` pages on (older), `before_id` pages back (newer). */
  private list(url: URL): FakeReply {
    const limit = Math.min(1000, Math.max(1, Number(url.searchParams.get('limit') ?? 20)));
    const all = [...this.batches.values()].reverse().map((b) => b.wire);
    const afterId = url.searchParams.get('after_id');
    const beforeId = url.searchParams.get('before_id');
    let page: typeof all;
    let hasMore: boolean;
    if (beforeId !== null) {
      const end = Math.max(
        0,
        all.findIndex((b) => b.id === beforeId),
      );
      page = all.slice(Math.max(0, end - limit), end);
      hasMore = end - limit > 0;
    } else {
      const start = afterId === null ? 0 : all.findIndex((b) => b.id === afterId) + 1;
      page = all.slice(start, start + limit);
      hasMore = start + limit < all.length;
    }
    return { status: 200, json: { data: page, has_more: hasMore, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null } };
  }
}

/** Anthropic's error body: `{type: "error", error: {type, message}}`. */
export function anthropicError(status: number, type: string, message: string): FakeReply {
  return { status, json: { type: 'error', error: { type, message }, request_id: 'req_fake' } };
}

function iso(): string {
  return new Date().toISOString();
}
