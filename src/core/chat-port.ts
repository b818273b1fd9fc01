// Where the serving side meets the gateway: an `llm` model asks for a chat completion through this
// interface, and app.ts plugs in the gateway's chat flow (routing, fallbacks, cache, limits, ledger).
// Plain data only, so serving needs nothing from gateway/.
import type { AbortLink } from './abort-link.ts';
import type { HerdError } from './errors.ts';

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
  /** Env var holding the gateway key the call runs as when the caller brought none (model parameter gateway_key_env). */
  keyEnv?: string;
  /** Who asked, as the transport admitted them (ChatPort.admit); absent for an in-process call (BLS, warmup). */
  caller?: ChatCaller;
  /** Names the caller in the ledger, e.g. `triton:smart_chat/chat:1`. */
  origin: string;
  /** Aborted when the Triton client went away or cancelled: the gateway aborts the upstream call and settles what it used. */
  signal?: AbortLink;
  /**
   * The W3C traceparent of the calling step's span (an llm model's), so the gateway's operation and attempts join
   * its trace; absent or tracing off: the gateway's spans start their own. tracestate rides along in traceState.
   */
  traceparent?: string;
  traceState?: string;
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

/** What a transport saw of a caller of a model that spends: the key it sent and where it came from. */
export interface ChatCredentials {
  /** `Authorization: Bearer <key>` or `x-api-key: <key>`, as HTTP headers or gRPC metadata; undefined when none was sent. */
  apiKey: string | undefined;
  /** The client's address (behind a trusted proxy, the hop it names); undefined when the transport cannot tell. */
  remoteAddress: string | undefined;
  /** A loopback peer that is no trusted proxy forwarded it from another machine (open mode refuses it, as /v1 does). */
  forwardedByUntrustedPeer?: boolean;
}

/**
 * A caller the gateway admitted at the transport's edge, carried through serving (ensemble steps
 * included) to the chat call. Opaque: only the port that issued it knows which principal it stands for.
 */
export interface ChatCaller {
  /** The principal's display name (a key's name, the model's own key, the serving identity). */
  readonly name: string;
}

/** How a loaded model spends: resolved once when it loads, so a transport's check is one property read. */
export interface ModelSpending {
  /** Every paid call it makes names its own gateway key (gateway_key_env), so a keyless caller may still run it. */
  ownKey: boolean;
}

/** The part of the chat port a transport needs to admit callers; absent when no gateway is configured (nothing can spend). */
export type ChatCallerGate = Pick<ChatPort, 'admit'>;

export interface ChatPort {
  /**
   * Decides, before any work, who a transport's request to a spending model pays as: the caller's own key
   * (its allowed models, limits, budget and ledger attribution apply), else only a principal the operator
   * named on purpose (`spending.ownKey`, an explicit `serving.identity`), else open mode's loopback rule.
   * A HerdError (UNAUTHENTICATED, RATE_LIMITED) when nobody may pay.
   */
  admit(credentials: ChatCredentials, spending: ModelSpending): ChatCaller | HerdError;
  /** Rejects with a HerdError (UPSTREAM_*, UNAVAILABLE, PERMISSION_DENIED, ...). */
  complete(request: ChatPortRequest): Promise<ChatPortResult>;
  /** Text deltas then `done`; an error before the first delta rejects the iteration, as does one after it. */
  stream(request: ChatPortRequest): AsyncIterable<ChatPortEvent>;
}
