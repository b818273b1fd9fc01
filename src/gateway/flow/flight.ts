// The shapes one gateway request carries through the flow (chat-gateway.ts): who calls, what admission
// decided (Flight), how the request ended (Ending, settle()'s one input) and what was known when it failed.
import type { AbortLink } from '../../core/abort-link.ts';
import type { CacheScopeSetting } from '../../config/cache-config-schema.ts';
import type { HerdError } from '../../core/errors.ts';
import type { BillingService, FinishBase } from '../billing/billing-service.ts';
import type { Cost } from '../billing/price-usage.ts';
import type { CachedAnswer } from '../cache/cached-answer.ts';
import type { CachePolicyConfig, CachePolicyDecision, RequestHeaders } from '../cache/cache-policy.ts';
import type { ResponseCache } from '../cache/response-cache.ts';
import type { TappedAnswer } from '../cache/tap-stream-for-cache.ts';
import type { KeyInfo } from '../keys/key-store.ts';
import type { KeyLimiter, KeyLimitTicket } from '../limits/key-limiter.ts';
import type { ChatRequest, ChatResponse } from '../protocol/chat-types.ts';
import type { JsonObject } from '../protocol/check-json-value.ts';
import type { IngressDialect } from '../protocol/ingress-dialect.ts';
import type { StreamResult } from '../protocol/stream-relay-types.ts';
import type { CompletionMeta } from '../router/chat-meta.ts';
import type { ResolvedRoute } from '../router/resolve-route.ts';
import type { ChatCompletion, ChatContext, ChatService, ChatStream } from './chat-service.ts';
import type { TraceParent } from '../../tracing/trace-parent.ts';
import type { FlowTracing } from './flow-tracing.ts';
import type { CacheOutcome, GatewayObserver } from './gateway-observer.ts';

/** Who shares cache entries (cache.scope): `key` (the default) gives every key its own; `shared`, one set for all. */
export type CacheScope = CacheScopeSetting;

export interface ChatGatewayDeps {
  chat: ChatService;
  cache?: { store: ResponseCache; policy: CachePolicyConfig & { scope?: CacheScope } };
  billing?: BillingService;
  keyLimits?: KeyLimiter;
  log?: (line: string) => void;
  /** Told once about every request, however it ended (metrics). */
  observer?: GatewayObserver;
  /** The HTTP status the transport answers a failure with (for the observer); default: estimateErrorStatus. */
  errorStatus?: (error: HerdError, dialect: IngressDialect) => number;
  /** Spans for each operation and its attempts; absent: tracing off. */
  tracing?: FlowTracing;
}

export interface GatewayCaller {
  key: KeyInfo;
  headers: RequestHeaders;
  /** Aborts when the client goes away. */
  signal: AbortLink;
  /** Set by a serving-side caller (an llm model): the ledger row names it. */
  origin?: string;
  /** The id the transport already answered with (x-request-id); absent: the flow makes one. The ledger row carries it. */
  requestId?: string;
  /** The wire format the client spoke; absent: OpenAI chat completions. */
  dialect?: IngressDialect;
  /**
   * The transport writes a same-dialect upstream's own bytes as they are: the JSON text attached in its
   * dialect, and RawSse pieces in streams. Absent: streams carry canonical chunks only (serving-side
   * callers, dialects without pass-through).
   */
  passThrough?: boolean;
  /**
   * The span this operation hangs under: the transport's SERVER span, or an llm model's step (serving-chat-port.ts
   * parses the traceparent the ChatPort call carries). Absent: the operation starts a trace of its own.
   */
  traceParent?: TraceParent | undefined;
  /** With passThrough: the client's body as sent, for an upstream of its dialect (absent for OpenAI chat, whose canonical request is its body). */
  body?: JsonObject;
  /**
   * A line of a client batch run realtime: no reservation of its own (the batch's, made at submission, is settled
   * by the line's cost), and the ledger row carries the batch's id. Billed at the realtime price.
   */
  batch?: { id: string } | undefined;
}

/**
 * `cost`: the price the settlement gave the request's ledger row (a cache hit's: what it saved), so a caller
 * that shows it (an llm model's `cost` output) does not price the request a second time; undefined without billing.
 */
export type GatewayAnswer =
  | { kind: 'completion'; response: ChatResponse; meta: CompletionMeta; cache: CacheOutcome; cost?: Cost | undefined }
  | { kind: 'stream'; stream: ChatStream; cache: CacheOutcome; cost?: Promise<Cost | undefined> };

/** A settled request: its rows' commit (never rejects) and the price they record. */
export interface Settled {
  committed: Promise<void>;
  cost: Cost | undefined;
}

/** One request on its way through the flow: what admission decided, read by every later step. */
export interface Flight {
  /** The request as the router sees it (an embeddings request: its model, no messages, no completion). */
  request: ChatRequest;
  caller: GatewayCaller;
  /** performance.now() when the flow was entered. */
  t0: number;
  route: ResolvedRoute;
  /** What every ledger row of this request carries. */
  base: FinishBase;
  ticket: KeyLimitTicket | undefined;
  context: ChatContext;
  policy: CachePolicyDecision | undefined;
  cacheKey: string | undefined;
  /** Prompt tokens counted at admission (0 when no decision needed them). */
  promptTokens: number;
  /** Set when the budget capped a request without max_tokens to this many (the x-herd-max-tokens-capped header). */
  maxTokensCapped?: number | undefined;
}

/** How a request ended: the one input of settle(). */
export type Ending =
  | { outcome: 'completion'; completion: ChatCompletion; overheadMs: number; cache: CacheOutcome }
  | { outcome: 'embedding'; meta: CompletionMeta; overheadMs: number }
  | { outcome: 'stream'; stream: ChatStream; result: StreamResult; ttftMs: number; overheadMs: number; cache: CacheOutcome; answer: TappedAnswer | undefined }
  | { outcome: 'cache-hit'; answer: Readonly<CachedAnswer>; stream: boolean; overheadMs: number }
  | { outcome: 'error'; error: HerdError; reserved: boolean };

/** What the flow knew when a request failed: the observer's labels for it. */
export interface Progress {
  model: string;
  cache: CacheOutcome;
  /** Once the chat service was called, upstream time is inside the elapsed time and overhead is unknown. */
  calledUpstream: boolean;
}
