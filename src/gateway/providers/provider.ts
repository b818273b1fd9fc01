// The contract every upstream adapter (openai, anthropic, gemini) implements: canonical chat data in,
// canonical chat data, normalised usage and a typed stream of events out. No HTTP types cross it.
import type { AbortLink } from '../../core/abort-link.ts';
import type { ChatChunk, ChatRequest, ChatResponse, FinishReason, Usage } from '../protocol/chat-types.ts';
import type { JsonObject } from '../protocol/check-json-value.ts';
import type { IngressDialect } from '../protocol/ingress-dialect.ts';
import type { TraceParent } from '../../tracing/trace-parent.ts';

export interface ProviderRequest {
  /** Validated canonical request. `stream` and `stream_options` are the client's; providers ignore them. */
  request: ChatRequest;
  /** The model id the upstream knows (the router resolves aliases and deployments to this). */
  upstreamModel: string;
  /**
   * Per-attempt timeout. chat(): the whole exchange. stream(): until the first upstream event
   * arrives (time to first token); after that idleTimeoutMs applies. Defaults to the provider's.
   */
  timeoutMs?: number;
  /** stream() only: longest silence allowed between two upstream reads. Defaults to timeoutMs. */
  idleTimeoutMs?: number;
  /**
   * The client takes the upstream's own bytes when the upstream speaks its dialect. A provider whose
   * upstream speaks `passThrough.dialect` sends the client's body (when given) with only the model
   * replaced, attaches the answer's bytes in that dialect, and streams `raw` events instead of `chunk`s;
   * others ignore it and translate.
   */
  passThrough?: PassThrough;
  /** The route's `strict` setting: a bridged attempt refuses what it would drop (bridge-unmodeled.ts). */
  strict?: boolean;
  /** The attempt's span: its traceparent goes on the upstream request (absent: tracing off, nothing sent). */
  traceParent?: TraceParent | undefined;
}

/** What a same-dialect upstream may receive and return unchanged. */
export interface PassThrough {
  dialect: IngressDialect;
  /**
   * The client's request body as it sent it (parsed, already validated by the dialect's decoder, `model`
   * still the client's). Absent where the canonical request is that body (OpenAI chat).
   */
  body?: Readonly<JsonObject>;
}

/** A request setting the upstream cannot honour and that was left out (not an error, not silent). */
export interface ProviderWarning {
  /** OpenAI-style path of the setting, e.g. `presence_penalty` or `messages[1].name`. */
  param: string;
  message: string;
}

export interface ProviderResult {
  /** An OpenAI chat.completion; `usage` is always present and matches `usage` below. */
  response: ChatResponse;
  usage: Usage;
  /** The upstream's own stop reason for choice 0 (e.g. `end_turn`, `MAX_TOKENS`), for logs. */
  rawFinishReason: string | null;
  warnings: ProviderWarning[];
}

/**
 * What stream() yields, in this order: at most one `warnings` (before anything else), any number of
 * `chunk`s, then exactly one `usage` (estimated when the upstream sent none) and exactly one `done`.
 * Chunks never carry usage. An upstream failure ends the iteration by throwing an UpstreamError.
 */
export type ProviderStreamEvent =
  | { type: 'warnings'; warnings: ProviderWarning[] }
  | { type: 'chunk'; chunk: ChatChunk }
  /**
   * Pass-through (`passThrough`): whole upstream events as sent in `dialect`, `chunks` of them content
   * events (at least one makes the stream open). `model`: the name the upstream's events carry, for renaming.
   */
  | { type: 'raw'; text: string; dialect: IngressDialect; chunks: number; model: string | undefined }
  /**
   * `bytes`: the upstream's own usage chunk (JSON text), when it spoke OpenAI chat; replayed as is under
   * include_usage. `delivered`: the usage chunk was already in the raw text (or cut from it), so none is made.
   */
  | { type: 'usage'; usage: Usage; bytes?: string; delivered?: boolean }
  | { type: 'done'; finishReason: FinishReason | null; rawFinishReason: string | null };

/** One embeddings attempt: texts in, one vector per text out (POST /v1/embeddings). */
export interface EmbedRequest {
  inputs: string[];
  upstreamModel: string;
  /** Output size the client asked for, where the model allows shortening. */
  dimensions?: number;
  timeoutMs?: number;
  /** As ProviderRequest.traceParent. */
  traceParent?: TraceParent | undefined;
}

export interface EmbedResult {
  /** In the order of `inputs`. */
  vectors: Float32Array[];
  /** Prompt tokens the upstream counted (estimated when it sent none; `estimated` says so). */
  usage: { promptTokens: number; estimated?: boolean };
}

export interface Provider {
  /** Configured provider name (`holysheep`, `anthropic`, ...), used in errors and metrics. */
  readonly name: string;
  /**
   * One upstream attempt, no retries (the router owns the one retry loop). Upstream failures reject
   * with UpstreamError; when `signal` aborts, rejects with `signal.reason` unchanged.
   */
  chat(req: ProviderRequest, signal: AbortLink): Promise<ProviderResult>;
  /** Same error contract as chat(); breaking out of the iteration releases the upstream request. */
  stream(req: ProviderRequest, signal: AbortLink): AsyncIterable<ProviderStreamEvent>;
  /** Embeddings, for providers whose upstream offers them; same error contract as chat(). */
  embed?(req: EmbedRequest, signal: AbortLink): Promise<EmbedResult>;
  /** The model ids the upstream's own model list names (GET /v1/models or its dialect's own), for pattern routes' listing. */
  listModels?(signal: AbortLink, timeoutMs: number): Promise<string[]>;
  /** Closes pooled upstream connections. */
  close(): Promise<void>;
}
