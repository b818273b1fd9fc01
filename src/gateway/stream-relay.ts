// Forwards a provider stream that has produced its first event: chunks renamed to the public model,
// the usage chunk only when the client asked for it, and no switching upstream after this point —
// a failure now ends the stream with an error. Settles the attempt's lease when the stream ends.
import type { AbortLink } from '../core/abort-link.ts';
import type { Clock } from '../core/clock.ts';
import type { HerdError } from '../core/errors.ts';
import type { ChatChunk, ChatRequest, FinishReason, Usage } from './chat-types.ts';
import { convertUsageToOpenAI } from './convert-usage-to-openai.ts';
import type { ProviderStreamEvent, ProviderWarning } from './providers/provider.ts';
import { UpstreamError } from './providers/upstream-error.ts';
import type { AttemptLease } from './router/attempt-lease.ts';
import { UpstreamRouteError, type AttemptRecord } from './router/attempt-record.ts';
import { CompletionTextCollector, estimateUsage } from './usage-estimate.ts';

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
    if (next.value.type === 'chunk' || next.value.type === 'done') return { iterator, head, warnings };
  }
}

export type StreamOutcome = 'completed' | 'failed' | 'cancelled';

export interface StreamResult {
  outcome: StreamOutcome;
  /** The upstream's usage, or Herd's estimate of what was produced when it sent none (failed or cancelled streams). */
  usage: Usage;
  finishReason: FinishReason | null;
  rawFinishReason: string | null;
  /** Why a `failed` stream ended. */
  error?: HerdError;
  /** Chunks handed to the consumer (the usage chunk not counted). */
  chunks: number;
  /** From the first chunk being ready to the end, ms. */
  streamMs: number;
}

export interface StreamRelay {
  chunks: AsyncIterable<ChatChunk>;
  /** Stops the upstream and settles the stream as cancelled; safe to call at any time, and again. */
  cancel(): void;
  /** Settles when the stream ends, however it ends; never rejects. */
  result: Promise<StreamResult>;
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
  const { opened, lease, request, model, signal, clock } = options;
  const includeUsage = request.stream_options?.include_usage === true;
  const collector = new CompletionTextCollector();
  const startedAt = clock.now();
  let usage: Usage | undefined;
  let finishReason: FinishReason | null = null;
  let rawFinishReason: string | null = null;
  let lastChunk: ChatChunk | undefined;
  let chunks = 0;
  let finished = false;
  let reading = false;
  let settle!: (result: StreamResult) => void;
  const result = new Promise<StreamResult>((resolve) => { settle = resolve; });

  const finish = (outcome: StreamOutcome, error?: HerdError) => {
    if (finished) return;
    finished = true;
    signal.removeEventListener('abort', cancel);
    const streamMs = clock.now() - startedAt;
    const base = { outcome, finishReason, rawFinishReason, error, chunks, streamMs };
    if (usage !== undefined) settle({ usage, ...base });
    // The upstream bills what it generated even when the stream broke: count what was forwarded.
    else void estimateUsage(request, collector.text()).then((estimated) => settle({ usage: estimated, ...base }));
  };

  function cancel(): void {
    if (finished) return;
    lease.abort(new DOMException('the stream was cancelled', 'AbortError'));
    lease.release();
    // A provider generator paused at a yield is released by return(); one mid-read ends via the abort.
    if (!reading) void opened.iterator.return?.().catch(() => undefined);
    finish('cancelled');
  }

  const toClient = (event: ProviderStreamEvent): ChatChunk | undefined => {
    switch (event.type) {
      case 'chunk': {
        const chunk = event.chunk;
        chunk.model = model;
        if (includeUsage) chunk.usage = null;
        collector.addChunk(chunk);
        lastChunk = chunk;
        chunks++;
        return chunk;
      }
      case 'usage':
        usage = event.usage;
        return includeUsage ? usageChunk(lastChunk, model, event.usage) : undefined;
      case 'done':
        finishReason = event.finishReason;
        rawFinishReason = event.rawFinishReason;
        return undefined;
      case 'warnings':
        return undefined;
    }
  };

  async function* relay(): AsyncGenerator<ChatChunk> {
    try {
      for (const event of opened.head) {
        if (finished) return;
        const out = toClient(event);
        if (out !== undefined) yield out;
      }
      for (;;) {
        if (finished) return;
        reading = true;
        const next = await opened.iterator.next();
        reading = false;
        if (next.done) break;
        const out = toClient(next.value);
        if (out !== undefined) yield out;
      }
      lease.succeed();
      finish('completed');
    } catch (err) {
      reading = false;
      if (finished || signal.aborted) {
        lease.release();
        finish('cancelled');
        throw err;
      }
      if (!(err instanceof UpstreamError)) {
        lease.release();
        finish('failed');
        throw err;
      }
      lease.fail(err);
      const routed = UpstreamRouteError.wrap(err, options.attempts, `stream interrupted after ${chunks} chunk${chunks === 1 ? '' : 's'}: ${err.message}`);
      finish('failed', routed);
      throw routed;
    } finally {
      // The consumer stopped early (break / return()): release the upstream.
      if (!finished) cancel();
    }
  }

  signal.addEventListener('abort', cancel, { once: true });
  if (signal.aborted) cancel();
  return { chunks: relay(), cancel, result };
}

/** OpenAI's last chunk under include_usage: empty choices, the usage of the whole request. */
function usageChunk(last: ChatChunk | undefined, model: string, usage: Usage): ChatChunk {
  const chunk: ChatChunk = {
    id: last?.id ?? 'chatcmpl-herd', object: 'chat.completion.chunk', created: last?.created ?? Math.floor(Date.now() / 1000),
    model, choices: [], usage: convertUsageToOpenAI(usage),
  };
  if (last?.system_fingerprint !== undefined) chunk.system_fingerprint = last.system_fingerprint;
  return chunk;
}
