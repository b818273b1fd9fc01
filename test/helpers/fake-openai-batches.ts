// A local upstream speaking OpenAI's Files API (multipart upload, content download) and Batch API (create,
// retrieve, cursor list, cancel) as OpenAI documents them; batches move `validating → in_progress → finalizing
// → completed` (or failed, expired, cancelling → cancelled) when the test says so or on a tick.
import type { IncomingMessage } from 'node:http';
import { Busboy } from '@fastify/busboy';
import { fakeChatCompletion, fakeEmbeddings } from './fake-batch-answers.ts';
import { type FakeCall, FakeBatchServer, type FakeReply, isObject, readJson } from './fake-batch-server.ts';

export const FAKE_OPENAI_ENDPOINTS = ['/v1/chat/completions', '/v1/embeddings', '/v1/completions', '/v1/responses'];
const TERMINAL = new Set(['completed', 'failed', 'expired', 'cancelled']);

export interface FakeOpenAIFile {
  id: string;
  purpose: string;
  filename: string;
  bytes: Buffer;
  createdAt: number;
}

export interface FakeOpenAIInputLine {
  custom_id: string;
  method: string;
  url: string;
  body: Record<string, unknown>;
}

/** One batch as the fake keeps it: `wire` is what GET returns; `lines` what its input file held. */
export interface FakeOpenAIBatch {
  wire: Record<string, unknown> & { id: string; status: string };
  lines: FakeOpenAIInputLine[];
  /** Validation errors found at create, reported when it leaves `validating`. */
  invalid: { code: string; line: number; message: string }[];
  /** Answered lines by custom_id: the output or error file line. */
  done: Map<string, Record<string, unknown>>;
}

export interface FakeOpenAIOptions {
  /** Required as `Authorization: Bearer <apiKey>` when set. */
  apiKey?: string;
  /** Advance every unfinished batch one state per tick. */
  tickMs?: number;
}

export class FakeOpenAIBatches {
  readonly files = new Map<string, FakeOpenAIFile>();
  readonly batches = new Map<string, FakeOpenAIBatch>();
  /** custom_id → the HTTP status its line answers with (400 and up fail it; 200 answers normally). */
  readonly failing = new Map<string, number>();
  private readonly server: FakeBatchServer;
  private seq = 0;
  private timer: NodeJS.Timeout | undefined;

  private constructor(options: FakeOpenAIOptions) {
    this.server = new FakeBatchServer({
      routes: this.routes(),
      authenticate: (req) =>
        options.apiKey === undefined || req.headers.authorization === `Bearer ${options.apiKey}` ? undefined : openAIError(401, 'Incorrect API key provided.', 'invalid_api_key'),
      notFound: (method, path) => openAIError(404, `Invalid URL (${method} ${path})`),
      rateLimited: () => openAIError(429, 'Rate limit reached for requests', 'rate_limit_exceeded', 'requests').json,
    });
  }

  static async start(options: FakeOpenAIOptions = {}): Promise<FakeOpenAIBatches> {
    const fake = new FakeOpenAIBatches(options);
    await fake.server.listen();
    if (options.tickMs !== undefined) fake.timer = setInterval(() => fake.tick(), options.tickMs);
    return fake;
  }

  /** The base URL an OpenAI client takes (`…/v1`). */
  get baseUrl(): string {
    return `${this.server.url}/v1`;
  }

  get calls(): readonly FakeCall[] {
    return this.server.calls;
  }

  /** The next `count` batch creations answer 429 with `retry-after`. */
  rejectCreates(count: number, retryAfterSeconds = 7): void {
    this.server.throttle('create', count, retryAfterSeconds);
  }

  failLines(customIds: Iterable<string>, status = 500): void {
    for (const id of customIds) this.failing.set(id, status);
  }

  /** One step: validating → in_progress (or failed), in_progress → finalizing (every line answered), finalizing → completed, cancelling → cancelled. */
  advance(id: string): string {
    const batch = this.get(id);
    const { wire } = batch;
    if (wire.status === 'validating') {
      if (batch.invalid.length > 0) this.setStatus(batch, 'failed', 'failed_at', { errors: { object: 'list', data: batch.invalid.map((e) => ({ ...e, param: null })) } });
      else {
        this.setStatus(batch, 'in_progress', 'in_progress_at');
        this.countDone(batch);
      }
    } else if (wire.status === 'in_progress') {
      this.progress(id, batch.lines.length);
      this.setStatus(batch, 'finalizing', 'finalizing_at');
    } else if (wire.status === 'finalizing') this.finish(batch, 'completed', 'completed_at');
    else if (wire.status === 'cancelling') this.finish(batch, 'cancelled', 'cancelled_at');
    return wire.status;
  }

  /** Advances until the batch is terminal; returns its final status. */
  runToEnd(id: string): string {
    while (!TERMINAL.has(this.get(id).wire.status)) this.advance(id);
    return this.get(id).wire.status;
  }

  /** Answers the next `count` unanswered lines of an in_progress batch (partial progress before a cancel or expiry). */
  progress(id: string, count: number): void {
    const batch = this.get(id);
    let left = count;
    for (const line of batch.lines) {
      if (left === 0) break;
      if (batch.done.has(line.custom_id)) continue;
      batch.done.set(line.custom_id, this.answer(line));
      left--;
    }
    this.countDone(batch);
  }

  /** The 24 h window ran out: answered lines go to the output file, the rest `batch_expired` to the error file. */
  expire(id: string): void {
    const batch = this.get(id);
    if (!TERMINAL.has(batch.wire.status)) this.finish(batch, 'expired', 'expired_at');
  }

  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    await this.server.close();
  }

  private tick(): void {
    for (const [id, batch] of this.batches) if (!TERMINAL.has(batch.wire.status)) this.advance(id);
  }

  private get(id: string): FakeOpenAIBatch {
    const batch = this.batches.get(id);
    if (batch === undefined) throw new Error(`fake openai: no batch ${id}`);
    return batch;
  }

  private nextId(prefix: string): string {
    this.seq++;
    return `${prefix}${String(this.seq).padStart(6, '0')}`;
  }

  private setStatus(batch: FakeOpenAIBatch, status: string, stamp: string, extra: Record<string, unknown> = {}): void {
    Object.assign(batch.wire, { status, [stamp]: now() }, extra);
  }

  private countDone(batch: FakeOpenAIBatch): void {
    let failed = 0;
    for (const line of batch.done.values()) if (isObject(line.error) || (isObject(line.response) && Number(line.response.status_code) >= 400)) failed++;
    batch.wire.request_counts = { total: batch.lines.length, completed: batch.done.size - failed, failed };
  }

  private answer(line: FakeOpenAIInputLine): Record<string, unknown> {
    const n = this.seq++;
    const status = this.failing.get(line.custom_id) ?? 200;
    const body =
      status >= 400
        ? { error: { message: `fake failure for ${line.custom_id}`, type: status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code: null } }
        : line.url === '/v1/embeddings'
          ? fakeEmbeddings(line.body)
          : fakeChatCompletion(line.body, n);
    return { id: `batch_req_${n}`, custom_id: line.custom_id, response: { status_code: status, request_id: `req_${n}`, body }, error: null };
  }

  /** A terminal state with results: answered lines split into the output and error files; unanswered ones get `code`. */
  private finish(batch: FakeOpenAIBatch, status: 'completed' | 'expired' | 'cancelled', stamp: string): void {
    const code = status === 'expired' ? 'batch_expired' : 'batch_cancelled';
    const message = status === 'expired' ? 'This request could not be executed before the completion window expired.' : 'This request was cancelled before it was executed.';
    const output: string[] = [];
    const errors: string[] = [];
    for (const line of batch.lines) {
      const done = batch.done.get(line.custom_id) ?? { id: `batch_req_${this.seq++}`, custom_id: line.custom_id, response: null, error: { code, message } };
      batch.done.set(line.custom_id, done);
      const ok = isObject(done.response) && Number(done.response.status_code) < 400;
      (ok ? output : errors).push(JSON.stringify(done));
    }
    this.countDone(batch);
    const outputFile = output.length > 0 ? this.storeFile('batch_output', `${batch.wire.id}_output.jsonl`, output) : null;
    const errorFile = errors.length > 0 ? this.storeFile('batch_output', `${batch.wire.id}_error.jsonl`, errors) : null;
    this.setStatus(batch, status, stamp, { output_file_id: outputFile, error_file_id: errorFile });
  }

  private storeFile(purpose: string, filename: string, lines: string[]): string {
    const id = this.nextId('file-fake');
    this.files.set(id, { id, purpose, filename, bytes: Buffer.from(`${lines.join('\n')}\n`), createdAt: now() });
    return id;
  }

  private routes() {
    return [
      { method: 'POST', pattern: /^\/v1\/files$/, handle: (_m: RegExpExecArray, req: IncomingMessage) => this.uploadFile(req) },
      { method: 'GET', pattern: /^\/v1\/files\/([^/]+)$/, handle: (m: RegExpExecArray) => this.withFile(m[1]!, (f) => ({ status: 200, json: fileObject(f) })) },
      {
        method: 'GET',
        pattern: /^\/v1\/files\/([^/]+)\/content$/,
        handle: (m: RegExpExecArray) => this.withFile(m[1]!, (f) => ({ status: 200, bytes: f.bytes, contentType: 'application/octet-stream' })),
      },
      {
        method: 'DELETE',
        pattern: /^\/v1\/files\/([^/]+)$/,
        handle: (m: RegExpExecArray) => this.withFile(m[1]!, (f) => this.deleteFile(f)),
      },
      { method: 'POST', pattern: /^\/v1\/batches$/, name: 'create', handle: (_m: RegExpExecArray, req: IncomingMessage) => this.createBatch(req) },
      { method: 'GET', pattern: /^\/v1\/batches$/, handle: (_m: RegExpExecArray, _r: IncomingMessage, url: URL) => this.listBatches(url) },
      { method: 'GET', pattern: /^\/v1\/batches\/([^/]+)$/, handle: (m: RegExpExecArray) => this.withBatch(m[1]!, (b) => ({ status: 200, json: b.wire })) },
      { method: 'POST', pattern: /^\/v1\/batches\/([^/]+)\/cancel$/, handle: (m: RegExpExecArray) => this.withBatch(m[1]!, (b) => this.cancel(b)) },
    ];
  }

  private withFile(id: string, reply: (file: FakeOpenAIFile) => FakeReply): FakeReply {
    const file = this.files.get(id);
    return file === undefined ? openAIError(404, `No such File object: ${id}`) : reply(file);
  }

  private withBatch(id: string, reply: (batch: FakeOpenAIBatch) => FakeReply): FakeReply {
    const batch = this.batches.get(id);
    return batch === undefined ? openAIError(404, `No batch found with id '${id}'.`) : reply(batch);
  }

  private deleteFile(file: FakeOpenAIFile): FakeReply {
    this.files.delete(file.id);
    return { status: 200, json: { id: file.id, object: 'file', deleted: true } };
  }

  private async uploadFile(req: IncomingMessage): Promise<FakeReply> {
    const type = req.headers['content-type'] ?? '';
    if (!type.startsWith('multipart/form-data')) return openAIError(400, 'Expected multipart/form-data');
    const parts = await readMultipart(req);
    if (parts.file === undefined) return openAIError(400, "Missing required parameter: 'file'.");
    const purpose = parts.fields.purpose;
    if (purpose === undefined) return openAIError(400, "Missing required parameter: 'purpose'.");
    const id = this.nextId('file-fake');
    const file = { id, purpose, filename: parts.file.filename, bytes: parts.file.bytes, createdAt: now() };
    this.files.set(id, file);
    return { status: 200, json: fileObject(file) };
  }

  private async createBatch(req: IncomingMessage): Promise<FakeReply> {
    const body = await readJson(req);
    if (!isObject(body)) return openAIError(400, 'We could not parse the JSON body of your request.');
    const { input_file_id: inputFileId, endpoint, completion_window: window, metadata } = body;
    if (typeof endpoint !== 'string' || !FAKE_OPENAI_ENDPOINTS.includes(endpoint))
      return openAIError(400, `Invalid value for 'endpoint': ${String(endpoint)}.`, null, 'invalid_request_error', 'endpoint');
    if (window !== '24h') return openAIError(400, "Invalid value for 'completion_window': only '24h' is supported.", null, 'invalid_request_error', 'completion_window');
    const file = typeof inputFileId === 'string' ? this.files.get(inputFileId) : undefined;
    if (file === undefined) return openAIError(400, `Invalid 'input_file_id': '${String(inputFileId)}'.`, null, 'invalid_request_error', 'input_file_id');
    if (file.purpose !== 'batch') return openAIError(400, `File ${file.id} has purpose '${file.purpose}', expected 'batch'.`);
    const id = this.nextId('batch_fake');
    const created = now();
    const { lines, invalid } = parseInput(file.bytes, endpoint);
    const wire = {
      id,
      object: 'batch',
      endpoint,
      model: lines[0]?.body.model ?? null,
      errors: null,
      input_file_id: file.id,
      completion_window: '24h',
      status: 'validating',
      output_file_id: null,
      error_file_id: null,
      created_at: created,
      in_progress_at: null,
      expires_at: created + 24 * 3600,
      finalizing_at: null,
      completed_at: null,
      failed_at: null,
      expired_at: null,
      cancelling_at: null,
      cancelled_at: null,
      request_counts: { total: 0, completed: 0, failed: 0 },
      metadata: isObject(metadata) ? metadata : null,
    };
    this.batches.set(id, { wire, lines, invalid, done: new Map() });
    return { status: 200, json: wire };
  }

  private cancel(batch: FakeOpenAIBatch): FakeReply {
    const status = batch.wire.status;
    if (status === 'validating' || status === 'in_progress' || status === 'finalizing') this.setStatus(batch, 'cancelling', 'cancelling_at');
    else if (status !== 'cancelling') return openAIError(409, `Cannot cancel a batch with status '${status}'.`);
    return { status: 200, json: batch.wire };
  }

  /** Newest first; `after` is the last id of the previous page. */
  private listBatches(url: URL): FakeReply {
    const limit = Math.min(100, Math.max(1, Number(url.searchParams.get('limit') ?? 20)));
    const all = [...this.batches.values()].reverse();
    const after = url.searchParams.get('after');
    const start = after === null ? 0 : all.findIndex((b) => b.wire.id === after) + 1;
    const page = all.slice(start, start + limit).map((b) => b.wire);
    return { status: 200, json: { object: 'list', data: page, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null, has_more: start + limit < all.length } };
  }
}

/** OpenAI's error body: `{error: {message, type, param, code}}`. */
export function openAIError(status: number, message: string, code: string | null = null, type = 'invalid_request_error', param: string | null = null): FakeReply {
  return { status, json: { error: { message, type, param, code } } };
}

function fileObject(file: FakeOpenAIFile): Record<string, unknown> {
  return {
    id: file.id,
    object: 'file',
    bytes: file.bytes.length,
    created_at: file.createdAt,
    filename: file.filename,
    purpose: file.purpose,
    status: 'processed',
    expires_at: null,
    status_details: null,
  };
}

function now(): number {
  return Math.floor(Date.now() / 1000);
}

/** The input file's lines as OpenAI validates them: JSON, a unique custom_id, POST to the batch's endpoint, a body. */
function parseInput(bytes: Buffer, endpoint: string): { lines: FakeOpenAIInputLine[]; invalid: FakeOpenAIBatch['invalid'] } {
  const lines: FakeOpenAIInputLine[] = [];
  const invalid: FakeOpenAIBatch['invalid'] = [];
  const seen = new Set<string>();
  const texts = bytes.toString('utf8').split('\n');
  texts.forEach((text, index) => {
    if (text.trim() === '') return;
    const line = index + 1;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      invalid.push({ code: 'invalid_json_line', line, message: 'This line is not parseable as valid JSON.' });
      return;
    }
    if (!isObject(parsed) || typeof parsed.custom_id !== 'string') invalid.push({ code: 'missing_required_parameter', line, message: "Missing required parameter: 'custom_id'." });
    else if (seen.has(parsed.custom_id)) invalid.push({ code: 'duplicate_custom_id', line, message: 'The custom_id for this request is a duplicate of another request.' });
    else if (parsed.method !== 'POST') invalid.push({ code: 'invalid_method', line, message: "Only the 'POST' method is supported." });
    else if (parsed.url !== endpoint) invalid.push({ code: 'mismatched_endpoint', line, message: `The url '${String(parsed.url)}' does not match the batch's endpoint.` });
    else if (!isObject(parsed.body)) invalid.push({ code: 'missing_required_parameter', line, message: "Missing required parameter: 'body'." });
    else {
      seen.add(parsed.custom_id);
      lines.push({ custom_id: parsed.custom_id, method: 'POST', url: parsed.url, body: parsed.body });
    }
  });
  if (lines.length + invalid.length === 0) invalid.push({ code: 'empty_file', line: 0, message: 'The input file is empty.' });
  return { lines, invalid };
}

async function readMultipart(req: IncomingMessage): Promise<{ fields: Record<string, string>; file?: { filename: string; bytes: Buffer } }> {
  const fields: Record<string, string> = {};
  let file: { filename: string; bytes: Buffer } | undefined;
  const busboy = new Busboy({ headers: req.headers as { 'content-type': string } });
  const done = new Promise<void>((resolve, reject) => {
    busboy.on('field', (name, value) => {
      fields[name] = value;
    });
    busboy.on('file', (name, stream, filename) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (name === 'file') file = { filename, bytes: Buffer.concat(chunks) };
      });
    });
    busboy.on('finish', resolve);
    busboy.on('error', reject);
  });
  req.pipe(busboy);
  await done;
  return file === undefined ? { fields } : { fields, file };
}
