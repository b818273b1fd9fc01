// Where the serving side meets the gateway: an `llm` model asks for a chat completion through this
// interface, and app.ts plugs in the gateway's chat flow (routing, fallbacks, cache, limits, ledger).
// Plain data only, so serving needs nothing from gateway/.

export type ChatPortPriority = 'HIGH' | 'NORMAL' | 'BATCH';

export interface ChatPortMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatPortRequest {
  /** A gateway model name, alias, tier (`balanced`) or `auto`. */
  model: string;
  messages: ChatPortMessage[];
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stop?: string[];
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  priority: ChatPortPriority;
  /** Env var holding the gateway key the call runs as; absent: the serving side's own identity. */
  keyEnv?: string;
  /** Names the caller in the ledger, e.g. `triton:smart_chat/chat:1`. */
  origin: string;
  /** Aborted when the Triton client went away or cancelled. */
  signal?: AbortSignal;
}

export interface ChatPortUsage {
  promptTokens: number;
  completionTokens: number;
}

/** What a finished call cost in the settlement currency, when the gateway prices it. */
export interface ChatPortCost {
  micros: number;
  currency: string;
}

export interface ChatPortResult {
  text: string;
  finishReason: string;
  /** The public model that answered and its provider. */
  model: string;
  provider: string;
  usage: ChatPortUsage;
  cost?: ChatPortCost;
}

export type ChatPortEvent =
  | { type: 'delta'; text: string }
  /** Last event: the whole answer's facts (text holds everything streamed). */
  | { type: 'done'; result: ChatPortResult };

export interface ChatPort {
  /** Rejects with a HerdError (UPSTREAM_*, UNAVAILABLE, PERMISSION_DENIED, ...). */
  complete(request: ChatPortRequest): Promise<ChatPortResult>;
  /** Text deltas then `done`; an error before the first delta rejects the iteration, as does one after it. */
  stream(request: ChatPortRequest): AsyncIterable<ChatPortEvent>;
}
