// A cache hit delivered as a live answer would be: a chat.completion with a fresh id, or the
// OpenAI chunk sequence for a streaming request, so the HTTP layer writes both as it does today. A
// pass-through client whose request matches the stored upstream bytes (dialect, mode, variant: see
// cached-bytes.ts) gets those bytes instead — the JSON text attached to the response, or the SSE text
// as RawSse pieces — so it sees what the first client saw.
//
// Fresh `id` and `created` on every hit, inside the bytes too: clients and log pipelines dedupe and
// correlate by id, and two requests answered with one id would look like one. The body is otherwise the
// original, `usage` included (the tokens the answer took; the hit itself is billed nothing — x-herd-cache: hit).
//
// Each text field (reasoning, content, refusal) is replayed as one delta and each tool call as one
// delta carrying id, name and the whole arguments: the answer is already complete, so splitting it
// would only add bytes and chunks; every client accumulates deltas of any size.
import type { ChatChunk, ChatChunkChoice, ChatChunkDelta, ChatChoice, ChatResponse, ChatUsage } from '../protocol/chat-types.ts';
import { convertUsageToOpenAI } from '../wire/openai-chat/convert-usage-to-openai.ts';
import { createCompletionId, nowSeconds } from '../wire/create-ids.ts';
import { RawSse, type StreamPiece } from '../protocol/raw-sse.ts';
import { attachUpstreamBytes } from '../protocol/upstream-bytes.ts';
import type { TierName } from '../../config/gateway-config-schema.ts';
import type { RouteKind } from '../router/resolve-route.ts';
import type { CachedAnswer } from './cached-answer.ts';
import { rewriteCachedTexts, selectCachedBytes } from './cached-bytes.ts';
import type { ByteReplayTarget } from './describe-byte-replay.ts';
import { createIdLike } from './rewrite-answer-identity.ts';
import type { CompletionMeta } from '../router/chat-meta.ts';
import type { StreamRelay, StreamResult } from '../protocol/stream-relay-types.ts';

export interface ReplayIdentity {
  /** Default: a new id (shaped like the stored bytes' id when they are replayed, else chatcmpl-). */
  id?: string;
  /** Unix seconds. Default: now. */
  created?: number;
  /** What stored bytes this request may get (describeByteReplay); absent: canonical objects only. */
  bytes?: ByteReplayTarget | undefined;
}

/**
 * The cached chat.completion for a non-streaming hit: a copy with a fresh id and created, carrying the
 * stored JSON bytes (with the same fresh id and created) when this request may have them.
 */
export function convertCachedToResponse(answer: Readonly<CachedAnswer>, identity: ReplayIdentity = {}): ChatResponse {
  const bytes = selectCachedBytes(answer, identity.bytes);
  const id = identity.id ?? (bytes === undefined ? createCompletionId() : createIdLike(bytes.id));
  const response = { ...answer.response, id, created: identity.created ?? nowSeconds() };
  if (bytes?.mode === 'json') {
    const [text] = rewriteCachedTexts(bytes, [bytes.text], { id: response.id, created: response.created });
    attachUpstreamBytes(response, text!, bytes.dialect);
  }
  return response;
}

export interface ReplayOptions extends ReplayIdentity {
  /** The request's stream_options.include_usage: adds the usage-only last chunk (and usage: null on the others). */
  includeUsage: boolean;
}

/** The chunks a live stream of this answer would have sent, in order, choice after choice. */
export function replayCachedChunks(answer: Readonly<CachedAnswer>, options: ReplayOptions): ChatChunk[] {
  const response = answer.response;
  const id = options.id ?? createCompletionId();
  const created = options.created ?? nowSeconds();
  const chunk = (choices: ChatChunkChoice[]): ChatChunk => {
    const out: ChatChunk = { id, object: 'chat.completion.chunk', created, model: response.model, choices };
    if (response.system_fingerprint !== undefined) out.system_fingerprint = response.system_fingerprint;
    if (options.includeUsage) out.usage = null;
    return out;
  };
  const chunks: ChatChunk[] = [];
  for (const choice of response.choices) {
    for (const part of replayChoice(choice)) chunks.push(chunk([part]));
  }
  if (options.includeUsage) chunks.push({ ...chunk([]), usage: usageOf(answer) });
  return chunks;
}

function replayChoice(choice: ChatChoice): ChatChunkChoice[] {
  const { index, message } = choice;
  const parts: ChatChunkChoice[] = [];
  const delta = (d: ChatChunkDelta, logprobs?: unknown) => {
    const part: ChatChunkChoice = { index, delta: d, finish_reason: null };
    if (logprobs !== undefined) part.logprobs = logprobs;
    parts.push(part);
  };
  // As OpenAI opens a stream: the role, with empty content (null when tool calls carry the turn).
  delta({ role: 'assistant', content: message.content === null ? null : '' });
  if (message.reasoning_content !== undefined && message.reasoning_content !== '') delta({ reasoning_content: message.reasoning_content });
  // Logprobs ride on the content delta: for one delta, the whole answer's list is the chunk's list.
  const hasContent = message.content !== null && message.content !== '';
  if (hasContent) delta({ content: message.content }, choice.logprobs ?? undefined);
  if (message.refusal !== undefined && message.refusal !== null) delta({ refusal: message.refusal }, hasContent ? undefined : (choice.logprobs ?? undefined));
  (message.tool_calls ?? []).forEach((call, i) => {
    delta({
      tool_calls: [
        call.type === 'function'
          ? { index: i, id: call.id, type: call.type, function: { name: call.function.name, arguments: call.function.arguments } }
          : { index: i, id: call.id, type: call.type, custom: { name: call.custom.name, input: call.custom.input } },
      ],
    });
  });
  parts.push({ index, delta: {}, finish_reason: choice.finish_reason });
  return parts;
}

function usageOf(answer: Readonly<CachedAnswer>): ChatUsage {
  return answer.response.usage ?? convertUsageToOpenAI(answer.usage);
}

/**
 * A StreamRelay over the replayed chunks, so a hit drops into the HTTP layer's streaming path:
 * `{ meta: createCacheHitMeta(...), ...createCachedStream(hit.answer, {...}) }` is a ChatStream. When the
 * request may have the stored stream bytes, its pieces are those (RawSse), the identity rewritten.
 */
export function createCachedStream(answer: Readonly<CachedAnswer>, options: ReplayOptions): StreamRelay {
  const replay = new CachedReplay(answer, replayPieces(answer, options));
  return { chunks: replayChunks(replay), cancel: replay.cancel, result: replay.result };
}

function replayPieces(answer: Readonly<CachedAnswer>, options: ReplayOptions): StreamPiece[] {
  const bytes = selectCachedBytes(answer, options.bytes);
  if (bytes?.mode !== 'stream') return replayCachedChunks(answer, options);
  const fresh = { id: options.id ?? createIdLike(bytes.id), created: options.created ?? nowSeconds() };
  return rewriteCachedTexts(bytes, bytes.events, fresh).map((text) => new RawSse(text, bytes.dialect));
}

/** A replay's state, handed to the generator as an argument rather than closed over (see stream-relay.ts). */
class CachedReplay {
  cancelled = false;
  sent = 0;
  readonly result: Promise<StreamResult>;
  private settle!: (result: StreamResult) => void;

  constructor(
    private readonly answer: Readonly<CachedAnswer>,
    readonly chunks: readonly StreamPiece[],
  ) {
    this.result = new Promise<StreamResult>((resolve) => {
      this.settle = resolve;
    });
  }

  finish(outcome: StreamResult['outcome']): void {
    const first = this.answer.response.choices[0];
    this.settle({
      outcome,
      usage: this.answer.usage,
      finishReason: first?.finish_reason ?? null,
      rawFinishReason: first?.finish_reason ?? null,
      chunks: this.sent,
      streamMs: 0,
    });
  }

  readonly cancel = (): void => {
    this.cancelled = true;
    this.finish('cancelled');
  };
}

async function* replayChunks(replay: CachedReplay): AsyncGenerator<StreamPiece> {
  let completed = false;
  try {
    for (const piece of replay.chunks) {
      if (replay.cancelled) return;
      yield piece;
      // A raw piece counts as one: its events are not read again to count them.
      if (piece instanceof RawSse || piece.choices.length > 0) replay.sent++;
    }
    completed = true;
  } finally {
    // A consumer that stops early (break, return()) lands here too.
    replay.finish(completed ? 'completed' : 'cancelled');
  }
}

export interface CacheHitRoute {
  /** The `model` the client sent. */
  requestedModel: string;
  route: RouteKind;
  /** The herd.yaml rule the requested model matched (x-herd-route). */
  routeRule: string;
  tier?: TierName;
  /** Herd's time for the request so far, ms. */
  overheadMs?: number;
}

/** The meta chat.complete / chat.stream would give, for a hit: no attempts, no upstream time. */
export function createCacheHitMeta(answer: Readonly<CachedAnswer>, route: CacheHitRoute): CompletionMeta {
  const meta: CompletionMeta = {
    requestedModel: route.requestedModel,
    route: route.route,
    routeRule: route.routeRule,
    model: answer.model,
    provider: answer.provider,
    upstreamModel: answer.upstreamModel,
    attempts: [],
    upstreamMs: 0,
    waitedMs: 0,
    overheadMs: route.overheadMs ?? 0,
    warnings: [],
    usage: answer.usage,
    rawFinishReason: answer.response.choices[0]?.finish_reason ?? null,
  };
  if (route.tier !== undefined) meta.tier = route.tier;
  return meta;
}
