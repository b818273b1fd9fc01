// Forwards a provider stream that has produced its first event: chunks renamed to the public model,
// the usage chunk only when the client asked for it, and no switching upstream after this point —
// a failure now ends the stream with an error. Settles the attempt's lease when the stream ends.
import type { AbortLink } from '../../core/abort-link.ts';
import type { Clock } from '../../core/clock.ts';
import type { HerdError } from '../../core/errors.ts';
import type { ChatChunk, ChatRequest, FinishReason, Usage } from '../protocol/chat-types.ts';
import { convertUsageToOpenAI } from '../wire/openai-chat/convert-usage-to-openai.ts';
import { parseRawStreamChunks } from '../wire/parse-raw-stream-chunks.ts';
import type { IngressDialect } from '../protocol/ingress-dialect.ts';
import type { ProviderStreamEvent, ProviderWarning } from '../providers/provider.ts';
import { UpstreamError } from '../protocol/upstream-error.ts';
import type { AttemptLease } from '../router/attempt-lease.ts';
import { UpstreamRouteError, type AttemptRecord } from '../router/attempt-record.ts';
import { RawSse, type StreamPiece } from '../protocol/raw-sse.ts';
import type { StreamOutcome, StreamRelay, StreamResult } from '../protocol/stream-relay-types.ts';
import { attachUpstreamBytes, dropUpstreamBytes, renameModel, renameModelInText, rewriteField } from '../protocol/upstream-bytes.ts';
import { collectChunksText, type CompletionSample, CompletionTextCollector, estimateUsage, SAMPLE_CHARS } from '../protocol/usage-estimate.ts';

/** A provider stream up to and including its first chunk (or its `done`, for an empty answer). */
export interface OpenedStream {
  iterator: AsyncIterator<ProviderStreamEvent>;
  head: ProviderStreamEvent[];
  warnings: ProviderWarning[];
}

/** Reads events until the first chunk: every failure until then can still be retried or fall back. */
export async function openProviderStream(events: AsyncIterable<ProviderStreamEvent>): Promise<OpenedStream> {
  const iterator = events[Symbol.asyncIterator]();
  const head: ProviderStreamEvent[] = [];
  const warnings: ProviderWarning[] = [];
  for (;;) {
    const next = await iterator.next();
    if (next.done) return { iterator, head, warnings };
    if (next.value.type === 'warnings') warnings.push(...next.value.warnings);
    else head.push(next.value);
    const event = next.value;
    if (event.type === 'chunk' || event.type === 'done' || (event.type === 'raw' && event.chunks > 0)) return { iterator, head, warnings };
  }
}

export interface StreamRelayOptions {
  opened: OpenedStream;
  lease: AttemptLease;
  request: ChatRequest;
  /** The public model name every chunk carries. */
  model: string;
  /** The client's signal: if it aborts, the stream is cancelled even when nobody is reading it. */
  signal: AbortLink;
  attempts: readonly AttemptRecord[];
  clock: Clock;
}

export function createStreamRelay(options: StreamRelayOptions): StreamRelay {
  const run = new RelayRun(options);
  options.signal.addEventListener('abort', run.cancel, { once: true });
  if (options.signal.aborted) run.cancel();
  return { chunks: relayChunks(run), cancel: run.cancel, result: run.result };
}

/** Raw pieces carry their SSE framing: keep about as many as give SAMPLE_CHARS of text. */
const RAW_SAMPLE_CHARS = 4 * SAMPLE_CHARS;

/**
 * One stream's state. The generator below takes it as an argument rather than closing over it: on
 * Node 20 a generator closure that captures its creator's variables drags everything they reach into
 * the old generation; a parameter does not (docs/decisions/hot-path-allocation-shapes.md).
 */
class RelayRun {
  readonly options: StreamRelayOptions;
  readonly result: Promise<StreamResult>;
  private readonly includeUsage: boolean;
  private readonly collector = new CompletionTextCollector();
  private readonly startedAt: number;
  private usage: Usage | undefined;
  private finishReason: FinishReason | null = null;
  private rawFinishReason: string | null = null;
  private lastChunk: ChatChunk | undefined;
  /** The first raw pieces forwarded (up to RAW_SAMPLE_CHARS), kept for an estimate if the stream ends without usage. */
  private rawTexts: string[] | undefined;
  private rawKeptChars = 0;
  private rawTotalChars = 0;
  private rawDialect: IngressDialect = 'openai-chat';
  /** The `model` the upstream's chunks carry, for rewriting its usage chunk's bytes. */
  private upstreamModelName: string | undefined;
  chunks = 0;
  finished = false;
  reading = false;
  private settle!: (result: StreamResult) => void;

  constructor(options: StreamRelayOptions) {
    this.options = options;
    this.includeUsage = options.request.stream_options?.include_usage === true;
    this.startedAt = options.clock.now();
    this.result = new Promise<StreamResult>((resolve) => {
      this.settle = resolve;
    });
  }

  finish(outcome: StreamOutcome, error?: HerdError): void {
    if (this.finished) return;
    this.finished = true;
    const { signal, clock, request } = this.options;
    signal.removeEventListener('abort', this.cancel);
    const base = { outcome, finishReason: this.finishReason, rawFinishReason: this.rawFinishReason, error, chunks: this.chunks, streamMs: clock.now() - this.startedAt };
    if (this.usage !== undefined) this.settle({ usage: this.usage, ...base });
    // The upstream bills what it generated even when the stream broke: count what was forwarded.
    else void estimateUsage(request, this.forwardedText()).then((estimated) => this.settle({ usage: estimated, ...base }));
  }

  /** What was forwarded, as a bounded sample: a stream can be any size, its estimate's memory and time may not. */
  private forwardedText(): CompletionSample {
    if (this.rawTexts === undefined) return this.collector.sample();
    const text = collectChunksText(parseRawStreamChunks(this.rawDialect, this.rawTexts));
    const scale = this.rawKeptChars > 0 ? this.rawTotalChars / this.rawKeptChars : 1;
    return { text, totalChars: Math.round(text.length * scale) };
  }

  readonly cancel = (): void => {
    if (this.finished) return;
    const { lease, opened } = this.options;
    lease.abort(new DOMException('the stream was cancelled', 'AbortError'));
    lease.release();
    // A provider generator paused at a yield is released by return(); one mid-read ends via the abort.
    if (!this.reading) void opened.iterator.return?.().catch(() => undefined);
    this.finish('cancelled');
  };

  toClient(event: ProviderStreamEvent): StreamPiece | undefined {
    const model = this.options.model;
    switch (event.type) {
      case 'raw': {
        this.chunks += event.chunks;
        const text = event.model === undefined || event.model === model ? event.text : renameModelInText(event.text, event.model, model);
        this.rawTotalChars += text.length;
        if (this.rawKeptChars < RAW_SAMPLE_CHARS) {
          (this.rawTexts ??= []).push(text);
          this.rawKeptChars += text.length;
        }
        this.rawDialect = event.dialect;
        return new RawSse(text, event.dialect);
      }
      case 'chunk': {
        const chunk = event.chunk;
        this.upstreamModelName = chunk.model;
        renameModel(chunk, model);
        if (this.includeUsage) chunk.usage = null;
        this.collector.addChunk(chunk);
        this.lastChunk = chunk;
        this.chunks++;
        return chunk;
      }
      case 'usage':
        this.usage = event.usage;
        if (!this.includeUsage || event.delivered === true) return undefined;
        return usageChunk(this.lastChunk, model, event.usage, event.bytes === undefined ? undefined : { text: event.bytes, upstreamModel: this.upstreamModelName });
      case 'done':
        this.finishReason = event.finishReason;
        this.rawFinishReason = event.rawFinishReason;
        return undefined;
      case 'warnings':
        return undefined;
    }
  }
}

async function* relayChunks(run: RelayRun): AsyncGenerator<StreamPiece> {
  const { opened, lease, signal } = run.options;
  try {
    for (const event of opened.head) {
      if (run.finished) return;
      const out = run.toClient(event);
      if (out !== undefined) yield out;
    }
    for (;;) {
      if (run.finished) return;
      run.reading = true;
      const next = await opened.iterator.next();
      run.reading = false;
      if (next.done) break;
      const out = run.toClient(next.value);
      if (out !== undefined) yield out;
    }
    lease.succeed();
    run.finish('completed');
  } catch (err) {
    run.reading = false;
    if (run.finished || signal.aborted) {
      lease.release();
      run.finish('cancelled');
      throw err;
    }
    if (!(err instanceof UpstreamError)) {
      lease.release();
      run.finish('failed');
      throw err;
    }
    lease.fail(err);
    const routed = UpstreamRouteError.wrap(err, run.options.attempts, `stream interrupted after ${run.chunks} chunk${run.chunks === 1 ? '' : 's'}: ${err.message}`);
    run.finish('failed', routed);
    throw routed;
  } finally {
    // The consumer stopped early (break / return()): release the upstream.
    if (!run.finished) run.cancel();
  }
}

/**
 * OpenAI's last chunk under include_usage: empty choices, the usage of the whole request. An OpenAI-chat
 * upstream's own usage chunk goes on as its bytes (every usage detail it sent), the model renamed.
 */
function usageChunk(last: ChatChunk | undefined, model: string, usage: Usage, upstream?: { text: string; upstreamModel: string | undefined }): ChatChunk {
  const chunk: ChatChunk = {
    id: last?.id ?? 'chatcmpl-herd',
    object: 'chat.completion.chunk',
    created: last?.created ?? Math.floor(Date.now() / 1000),
    model,
    choices: [],
    usage: convertUsageToOpenAI(usage),
  };
  if (last?.system_fingerprint !== undefined) chunk.system_fingerprint = last.system_fingerprint;
  if (upstream !== undefined) {
    attachUpstreamBytes(chunk, upstream.text);
    if (upstream.upstreamModel === undefined) dropUpstreamBytes(chunk);
    else rewriteField(chunk, 'model', JSON.stringify(upstream.upstreamModel), JSON.stringify(model));
  }
  return chunk;
}
