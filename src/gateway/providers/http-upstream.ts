// One keep-alive undici Pool per provider base URL, with the two exchanges providers need: POST JSON
// and read JSON back, or POST JSON and read Server-Sent Events (and, for batch APIs, any method with a
// streamed body or a streamed answer). Every failure leaves as UpstreamError.
import type { AbortLink } from '../../core/abort-link.ts';
import { Readable } from 'node:stream';
import { Pool } from 'undici';
import { createParser } from 'eventsource-parser';
import { AttemptTimer } from './attempt-timer.ts';
import { parseRetryAfter } from '../wire/parse-retry-after.ts';
import { mapStatusToFailure, UpstreamError, type UpstreamErrorBody } from '../protocol/upstream-error.ts';
import { HerdError } from '../../core/errors.ts';
import { encodeUpstreamBody } from './encode-upstream-body.ts';
import { inject, isValidTraceParent, type TraceParent } from '../../tracing/trace-parent.ts';

export interface HttpUpstreamOptions {
  /** Provider name, prefixed to every error message. */
  provider: string;
  /** Origin plus optional path prefix, e.g. `https://api.holysheep.ai/v1`. */
  baseUrl: string;
  /** Sent on every request: auth and versions. */
  headers: Record<string, string>;
  /** Strings never to repeat in an error message (the API key), even if the upstream echoes them. */
  secrets?: string[];
  parseErrorBody: (body: unknown) => UpstreamErrorBody;
  /** Default per-attempt timeout when a call sets none. */
  timeoutMs: number;
  /** Upper bound on open sockets to this origin; undefined leaves undici's default (no bound). */
  connections?: number;
  keepAliveTimeoutMs?: number;
}

export interface UpstreamCall {
  /** Appended to the base URL's path; may carry a query (`...:streamGenerateContent?alt=sse`). */
  path: string;
  body: unknown;
  signal: AbortLink;
  timeoutMs?: number;
  /** Headers for this call only, over the upstream's own (a client's anthropic-beta). */
  headers?: Record<string, string> | undefined;
  /** SSE only: longest silence between reads once the first event arrived. Defaults to timeoutMs. */
  idleTimeoutMs?: number;
  /** The attempt span's context: sent as traceparent (and tracestate); absent or tracing off: nothing sent. */
  traceParent?: TraceParent | undefined;
  /**
   * SSE only: true for the dialect's last event ([DONE], message_stop). A consumer that stops after it
   * leaves at most a few trailing bytes, which are read so the keep-alive socket is reused, not closed.
   */
  isFinal?: (message: SseMessage) => boolean;
}

/** A request other than POST-JSON (batch APIs: uploads, downloads, DELETE, a POST with no body). */
export interface ExchangeCall {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  /** JSON text, or bytes sent as they come (chunked); absent: no body. */
  body?: string | AsyncIterable<Uint8Array>;
  contentType?: string;
  signal: AbortLink;
  timeoutMs?: number;
  /** exchangeStream() only: longest silence between reads once the response began. Defaults to timeoutMs. */
  idleTimeoutMs?: number;
}

/** What the reader of postSseText() has seen, read back by it between reads and when it ends. */
export interface SseRead {
  /** A whole event with data arrived: from then on each read gets the idle timeout, not the first-event one. */
  sawEvent: boolean;
  /** The stream's final event arrived: ending early keeps the socket (the terminator is drained). */
  sawFinal: boolean;
}

export interface SseMessage {
  event: string | undefined;
  data: string;
}

const MAX_ERROR_BODY_BYTES = 64 * 1024;
const MAX_MESSAGE_CHARS = 500;
/** After the final event, more than this is not a terminator: the socket is closed instead. */
const TRAILER_LIMIT_BYTES = 4096;

type UndiciResponse = Awaited<ReturnType<Pool['request']>>;

export class HttpUpstream {
  readonly provider: string;
  private readonly pool: Pool;
  private readonly pathPrefix: string;
  private readonly options: HttpUpstreamOptions;
  // Built once: undici only reads a request's headers, and a per-call `{ ...headers, accept }` was an
  // old-generation allocation on every request (see chat-service.ts).
  private readonly jsonHeaders: Record<string, string>;
  private readonly sseHeaders: Record<string, string>;

  constructor(options: HttpUpstreamOptions) {
    const url = new URL(options.baseUrl);
    this.provider = options.provider;
    this.options = options;
    this.pathPrefix = url.pathname.replace(/\/+$/, '');
    this.jsonHeaders = { ...options.headers, 'content-type': 'application/json', accept: 'application/json' };
    this.sseHeaders = { ...options.headers, 'content-type': 'application/json', accept: 'text/event-stream' };
    this.pool = new Pool(url.origin, {
      connections: options.connections ?? null,
      keepAliveTimeout: options.keepAliveTimeoutMs ?? 60_000,
      keepAliveMaxTimeout: Math.max(options.keepAliveTimeoutMs ?? 60_000, 600_000),
    });
  }

  /** POST a JSON body and return the parsed JSON response (shape unchecked: the caller converts it). */
  async postJson(call: UpstreamCall): Promise<unknown> {
    return (await this.postJsonText(call)).body;
  }

  /** postJson() with the response's text as received, for providers that pass the upstream's bytes on. */
  async postJsonText(call: UpstreamCall): Promise<{ body: unknown; text: string }> {
    const timer = new AttemptTimer(call.signal, call.timeoutMs ?? this.options.timeoutMs);
    try {
      const response = await this.send(call, timer, this.jsonHeaders);
      if (response.statusCode >= 400) throw await this.errorFromResponse(response);
      let text: string;
      try {
        text = await response.body.text();
      } catch (err) {
        throw this.translate(err, call, timer, 'body');
      }
      return { body: this.parseJson(text, 'response body'), text };
    } finally {
      timer.dispose();
    }
  }

  /** GET a JSON document (a KServe server's model metadata or config); `body` of the call is ignored. */
  async getJson(call: Omit<UpstreamCall, 'body'>): Promise<unknown> {
    const timer = new AttemptTimer(call.signal, call.timeoutMs ?? this.options.timeoutMs);
    const full: UpstreamCall = { ...call, body: undefined };
    try {
      const response = await this.send(full, timer, this.jsonHeaders, 'GET');
      if (response.statusCode >= 400) throw await this.errorFromResponse(response);
      let text: string;
      try {
        text = await response.body.text();
      } catch (err) {
        throw this.translate(err, full, timer, 'body');
      }
      return this.parseJson(text, 'response body');
    } finally {
      timer.dispose();
    }
  }

  /** POST a JSON body and yield the response's Server-Sent Events as they arrive. */
  async *postSse(call: UpstreamCall): AsyncGenerator<SseMessage> {
    const queue: SseMessage[] = [];
    let parseError: Error | undefined;
    const parser = createParser({
      onEvent: (message) => {
        queue.push({ event: message.event, data: message.data });
      },
      onError: (error) => {
        parseError ??= error;
      },
    });
    const reading: SseRead = { sawEvent: false, sawFinal: false };
    for await (const text of this.postSseText(call, reading)) {
      parser.feed(text);
      if (parseError !== undefined) throw this.malformed(`malformed SSE: ${this.safe(parseError.message)}`, parseError);
      if (queue.length > 0) reading.sawEvent = true;
      for (let i = 0; i < queue.length; i++) {
        const message = queue[i]!;
        if (call.isFinal?.(message) === true) reading.sawFinal = true;
        yield message;
      }
      queue.length = 0;
    }
  }

  /**
   * POST a JSON body and yield the SSE response's text as it arrives, decoded but otherwise as sent (byte
   * pass-through cuts it into events itself). The caller keeps `reading` up to date (see SseRead).
   */
  async *postSseText(call: UpstreamCall, reading: SseRead): AsyncGenerator<string> {
    const firstMs = call.timeoutMs ?? this.options.timeoutMs;
    const idleMs = call.idleTimeoutMs ?? firstMs;
    const timer = new AttemptTimer(call.signal, firstMs);
    let response: UndiciResponse | undefined;
    try {
      response = await this.send(call, timer, this.sseHeaders);
      if (response.statusCode >= 400) throw await this.errorFromResponse(response);
      const contentType = headerValue(response.headers['content-type']) ?? '';
      if (!contentType.includes('text/event-stream')) throw await this.errorFromUnexpectedBody(response, contentType);
      const decoder = new TextDecoder();
      const body = response.body[Symbol.asyncIterator]();
      for (;;) {
        // Until the first event the attempt's clock keeps running from the request's start; after
        // it, each read gets idleMs, and the clock stops while the consumer (not the upstream) holds us.
        if (reading.sawEvent) timer.arm(idleMs);
        else timer.resume();
        let next: IteratorResult<Buffer>;
        try {
          next = await body.next();
        } catch (err) {
          throw this.translate(err, call, timer, 'body');
        }
        if (next.done) break;
        const text = decoder.decode(next.value, { stream: true });
        if (text === '') continue;
        timer.disarm();
        yield text;
      }
      const tail = decoder.decode();
      if (tail !== '') yield tail;
    } catch (err) {
      throw err instanceof UpstreamError ? err : this.translate(err, call, timer, response ? 'body' : 'connect');
    } finally {
      timer.dispose();
      // Abandoned or failed streams must not keep the socket: destroying frees it (and the upstream).
      // A stream that reached its final event only has its terminator left: reading it keeps the socket.
      if (response !== undefined && !response.body.destroyed) {
        if (reading.sawFinal) response.body.dump({ limit: TRAILER_LIMIT_BYTES }).catch(() => undefined);
        else response.body.destroy();
      }
    }
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  /** Any method, a text or streamed body, a JSON answer (an empty one reads as undefined). */
  async exchangeJson(call: ExchangeCall): Promise<unknown> {
    const timer = new AttemptTimer(call.signal, call.timeoutMs ?? this.options.timeoutMs);
    try {
      const response = await this.sendExchange(call, timer, 'application/json');
      if (response.statusCode >= 400) throw await this.errorFromResponse(response);
      let text: string;
      try {
        text = await response.body.text();
      } catch (err) {
        throw this.translate(err, call, timer, 'body');
      }
      return text === '' ? undefined : this.parseJson(text, 'response body');
    } finally {
      timer.dispose();
    }
  }

  /** Any method, the answer's bytes as they arrive (a JSONL download); breaking out releases the socket. */
  async *exchangeStream(call: ExchangeCall): AsyncGenerator<Buffer> {
    const timer = new AttemptTimer(call.signal, call.timeoutMs ?? this.options.timeoutMs);
    let response: UndiciResponse | undefined;
    try {
      response = await this.sendExchange(call, timer, '*/*');
      if (response.statusCode >= 400) throw await this.errorFromResponse(response);
      const idleMs = call.idleTimeoutMs ?? call.timeoutMs ?? this.options.timeoutMs;
      const body = response.body[Symbol.asyncIterator]();
      for (;;) {
        timer.arm(idleMs);
        let next: IteratorResult<Buffer>;
        try {
          next = await body.next();
        } catch (err) {
          throw this.translate(err, call, timer, 'body');
        }
        if (next.done) break;
        // The consumer's own pace (writing to disk) is not the upstream's silence.
        timer.disarm();
        yield next.value;
      }
    } finally {
      timer.dispose();
      if (response !== undefined && !response.body.destroyed) response.body.destroy();
    }
  }

  private async sendExchange(call: ExchangeCall, timer: AttemptTimer, accept: string): Promise<UndiciResponse> {
    const headers: Record<string, string> = { ...this.options.headers, accept };
    if (call.contentType !== undefined) headers['content-type'] = call.contentType;
    // A Readable, which undici streams chunked: its body types do not name async iterables.
    const body = call.body === undefined || typeof call.body === 'string' ? (call.body ?? null) : Readable.from(call.body, { objectMode: false });
    try {
      return await this.pool.request({ method: call.method, path: this.pathPrefix + call.path, headers, body, signal: timer.signal });
    } catch (err) {
      throw this.translate(err, call, timer, 'connect');
    }
  }

  private async send(call: UpstreamCall, timer: AttemptTimer, headers: Record<string, string>, method: 'POST' | 'GET' = 'POST'): Promise<UndiciResponse> {
    // Encoded outside the transport's try: a body Herd cannot encode never reached the upstream.
    const body = method === 'GET' ? null : encodeUpstreamBody(call.body);
    try {
      return await this.pool.request({
        method,
        path: this.pathPrefix + call.path,
        headers: withTraceContext(call, call.headers === undefined ? headers : { ...headers, ...call.headers }),
        body,
        signal: timer.signal,
      });
    } catch (err) {
      throw this.translate(err, call, timer, 'connect');
    }
  }

  /**
   * Maps a thrown transport error; a caller abort passes through as the caller's own reason, and so does
   * Herd's own HerdError (a body it could not encode): neither says anything about the upstream.
   */
  private translate(err: unknown, call: { signal: AbortLink }, timer: AttemptTimer, phase: 'connect' | 'body'): unknown {
    if (err instanceof HerdError) return err;
    if (call.signal.aborted) return call.signal.reason;
    const code = errorCode(err);
    if (timer.timedOut || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
      const what = phase === 'connect' ? 'no response headers' : 'no data';
      return new UpstreamError(`${this.provider}: upstream timed out (${what} within ${timer.lastMs} ms)`, { provider: this.provider, failure: 'timeout', cause: err });
    }
    const detail = this.safe(code ?? (err instanceof Error ? err.message : String(err)));
    if (phase === 'connect') {
      return new UpstreamError(`${this.provider}: could not reach upstream (${detail})`, { provider: this.provider, failure: 'unavailable', cause: err });
    }
    return new UpstreamError(`${this.provider}: connection closed mid-response (${detail})`, { provider: this.provider, failure: 'interrupted', cause: err });
  }

  private async errorFromResponse(response: UndiciResponse): Promise<UpstreamError> {
    const status = response.statusCode;
    const text = await readCapped(response);
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    // A non-JSON error body is usually a proxy's HTML or plain-text page: keep its start, flattened.
    const details: UpstreamErrorBody = parsed === undefined ? { message: text.replace(/\s+/g, ' ').trim().slice(0, 200) } : this.options.parseErrorBody(parsed);
    const retryAfterSeconds =
      parseRetryAfter({
        'retry-after': headerValue(response.headers['retry-after']),
        'retry-after-ms': headerValue(response.headers['retry-after-ms']),
      }) ?? details.retryAfterSeconds;
    const type = details.type === undefined ? '' : ` ${this.safe(details.type)}`;
    const message = details.message ? `: ${this.safe(details.message)}` : '';
    return new UpstreamError(`${this.provider}: upstream returned HTTP ${status}${type}${message}`, {
      provider: this.provider,
      failure: details.failure ?? mapStatusToFailure(status),
      status,
      upstreamType: details.type,
      retryAfterSeconds,
    });
  }

  /** A 2xx stream request answered with something other than SSE: an error object, or garbage. */
  private async errorFromUnexpectedBody(response: UndiciResponse, contentType: string): Promise<UpstreamError> {
    const text = await readCapped(response);
    try {
      const details = this.options.parseErrorBody(JSON.parse(text));
      if (details.message !== undefined) {
        return new UpstreamError(`${this.provider}: upstream answered a stream request with an error: ${this.safe(details.message)}`, {
          provider: this.provider,
          failure: details.failure ?? 'server_error',
          status: response.statusCode,
          upstreamType: details.type,
        });
      }
    } catch {
      // not JSON: fall through to the generic message
    }
    return this.malformed(`expected text/event-stream, got '${this.safe(contentType || 'no content-type')}'`);
  }

  /** JSON.parse whose failure is a `malformed` UpstreamError (for SSE data read by providers). */
  parseJson(text: string, what: string): unknown {
    try {
      return JSON.parse(text);
    } catch (err) {
      throw this.malformed(`malformed JSON in ${what} (${text.length} bytes)`, err);
    }
  }

  /** An UpstreamError for a response that breaks its wire format; `detail` must already be safe. */
  malformed(detail: string, cause?: unknown): UpstreamError {
    return new UpstreamError(`${this.provider}: ${detail}`, { provider: this.provider, failure: 'malformed', cause });
  }

  /** Redacts secrets and bounds the length of upstream-supplied text before it enters a message. */
  safe(text: string): string {
    let out = text;
    for (const secret of this.options.secrets ?? []) {
      if (secret.length >= 4) out = out.split(secret).join('[redacted]');
    }
    return out.length > MAX_MESSAGE_CHARS ? `${out.slice(0, MAX_MESSAGE_CHARS)}…` : out;
  }
}

/** The start of an error body; the attempt's timer (still armed) bounds how long this can take. */
async function readCapped(response: UndiciResponse): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= MAX_ERROR_BODY_BYTES) break;
    }
  } catch {
    // A broken error body still leaves the status to report.
  } finally {
    if (!response.body.destroyed) response.body.destroy();
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, MAX_ERROR_BODY_BYTES);
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function errorCode(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string') return err.code;
  return undefined;
}

/** `headers` plus the call's traceparent; the shared header object is copied only when there is one to add. */
function withTraceContext(call: UpstreamCall, headers: Record<string, string>): Record<string, string> {
  if (!isValidTraceParent(call.traceParent)) return headers;
  const out = call.headers === undefined ? { ...headers } : headers;
  inject(call.traceParent, out);
  return out;
}
