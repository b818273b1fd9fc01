// The contract a client dialect implements at the gateway's edge: its request decoded into the canonical
// ChatRequest, and the canonical answer (a ChatResponse, or a stream of ChatChunks) encoded back into it.
import type { ChatChunk, ChatRequest, ChatResponse, Usage } from './chat-types.ts';
import type { IngressDialect } from './ingress-dialect.ts';

/** One server-sent event; `data` is serialised as JSON unless it is a string (JSON already serialised, or `[DONE]`). */
export interface SseEvent {
  event?: string;
  data: unknown;
}

/** An OpenAI-shaped error as the transport maps it, for a failure after the first streamed byte. */
export interface StreamFailure {
  message: string;
  type: string;
  code: string | null;
  param: string | null;
}

/** Encodes one answer's stream; the transport writes every event returned, in order. */
export interface IngressStreamEncoder {
  /** Events before the first chunk (Responses' response.created); may be none. */
  start(): SseEvent[];
  chunk(chunk: ChatChunk): SseEvent[];
  /** The stream ended normally; `usage` is the normalised usage the ledger records. */
  end(usage: Usage): SseEvent[];
  /** The stream broke after its first byte: the dialect's own terminal error event. */
  fail(error: StreamFailure): SseEvent[];
}

/** The answer's model as the client sees it (the public name of the model that answered). */
export interface EncodeContext {
  model: string;
}

export interface IngressCodec<Decoded> {
  dialect: IngressDialect;
  /** Throws HerdError INVALID_ARG / UNSUPPORTED naming the dialect's own param. */
  decode(body: unknown): { request: ChatRequest; decoded: Decoded };
  encodeResponse(response: ChatResponse, usage: Usage, decoded: Decoded): unknown;
  createStreamEncoder(decoded: Decoded, context: EncodeContext): IngressStreamEncoder;
  /**
   * Dialects with pass-through: after an upstream's own events (RawSse pieces), the text that ends the
   * stream normally (none: the upstream's last event already did), and the error event of a stream that
   * broke. `lastText` is the last piece written, for numbering that continues the upstream's.
   */
  raw?: {
    end(): string;
    fail(error: StreamFailure, lastText: string): string;
  };
}
