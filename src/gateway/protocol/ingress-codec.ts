// The contract a client dialect implements at the gateway's edge: its request decoded into the canonical
// ChatRequest, and the canonical answer (a ChatResponse, or a stream of ChatChunks) encoded back into it.
import type { ChatChunk, ChatRequest, ChatResponse, FinishReason, Usage } from './chat-types.ts';
import type { IngressDialect } from './ingress-dialect.ts';

/**
 * One server-sent event; `data` is serialised as JSON unless it is a string (JSON already serialised, or
 * `[DONE]`). `text`, when set, is SSE the encoder formatted itself (whole events, each through its blank
 * line), written as it is instead.
 */
export interface SseEvent {
  event?: string;
  data: unknown;
  text?: string;
}

/** An OpenAI-shaped error as the transport maps it, for a failure after the first streamed byte. */
export interface StreamFailure {
  message: string;
  type: string;
  code: string | null;
  param: string | null;
}

/** How a stream ended well, for dialects whose last event carries the stop reason. */
export interface StreamEndInfo {
  usage: Usage;
  finishReason: FinishReason | null;
  rawFinishReason: string | null;
}

/** Encodes one answer's stream; the transport writes every event returned, in order. `F`: the dialect's error, as the transport maps it. */
export interface IngressStreamEncoder<F = StreamFailure> {
  /** Events before the first chunk (Responses' response.created); may be none. */
  start(): SseEvent[];
  chunk(chunk: ChatChunk): SseEvent[];
  /** The stream ended normally; `usage` is the normalised usage the ledger records. */
  end(usage: Usage, info?: StreamEndInfo): SseEvent[];
  /** The stream broke after its first byte: the dialect's own terminal error event. */
  fail(error: F): SseEvent[];
}

/** The answer's model as the client sees it (the public name of the model that answered). */
export interface EncodeContext {
  model: string;
  /** Herd's count of the prompt's tokens, for dialects that announce it before the upstream has (Anthropic's message_start). */
  estimatedPromptTokens?: number | undefined;
}

/** Request headers as node:http gives them (lower-case names). */
export type IngressHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** What a JSON answer's encoder may need besides the response. */
export interface ResponseContext {
  rawFinishReason: string | null;
}

export interface IngressCodec<Decoded, F = StreamFailure> {
  dialect: IngressDialect;
  /**
   * True when a same-dialect upstream may get the client's body and the transport writes its own bytes
   * (JSON text, RawSse pieces) as they came.
   */
  passThrough: boolean;
  /** Throws HerdError INVALID_ARG / UNSUPPORTED naming the dialect's own param. */
  decode(body: unknown, headers: IngressHeaders): { request: ChatRequest; decoded: Decoded };
  /** The answer's JSON value (serialised by the transport), when no upstream bytes of this dialect are attached. */
  encodeResponse(response: ChatResponse, usage: Usage, decoded: Decoded, context: ResponseContext): unknown;
  createStreamEncoder(decoded: Decoded, context: EncodeContext): IngressStreamEncoder<F>;
  /**
   * Dialects with pass-through: after an upstream's own events (RawSse pieces), the text that ends the
   * stream normally (none: the upstream's last event already did), and the error event of a stream that
   * broke. `lastText` is the last piece written, for numbering that continues the upstream's.
   */
  raw?: {
    end(): string;
    fail(error: F, lastText: string): string;
  };
}
