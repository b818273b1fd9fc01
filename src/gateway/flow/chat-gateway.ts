// The gateway's one entry point: every chat request, whatever dialect the client spoke, goes through
// ChatGateway.handle(): the route resolved once (access checked), the key's rate limits, the exact-match
// cache, the budget reservation, the routed attempts on that route (chat-service.ts), then one
// settlement — ledger rows, reservation, TPM correction, cache write, metrics — however the request ends.
import type { AbortLink } from '../../core/abort-link.ts';
import { type HerdError, toHerdError } from '../../core/errors.ts';
import type { BillingService, FinishBase, FinishInput, FinishResult } from '../billing/billing-service.ts';
import type { Cost } from '../billing/price-usage.ts';
import type { CachedAnswer } from '../cache/cached-answer.ts';
import { captureCachedBytes, type CapturedBytes } from '../cache/cached-bytes.ts';
import { describeByteReplay } from '../cache/describe-byte-replay.ts';
import { evaluateCachedAnswer, evaluateCachePolicy, type CachePolicyConfig, type CachePolicyDecision, type RequestHeaders } from '../cache/cache-policy.ts';
import { computeCacheKey } from '../cache/compute-cache-key.ts';
import { convertCachedToResponse, createCacheHitMeta, createCachedStream } from '../cache/replay-cached-answer.ts';
import type { ResponseCache } from '../cache/response-cache.ts';
import { tapStreamForCache, type TappedAnswer } from '../cache/tap-stream-for-cache.ts';
import type { ChatCompletion, ChatContext, ChatService, ChatStream } from './chat-service.ts';
import type { ChatRequest, ChatResponse, Usage } from '../protocol/chat-types.ts';
import type { JsonObject } from '../protocol/check-json-value.ts';
import type { GatewayHealth } from './describe-gateway.ts';
import { estimateErrorStatus, mapStatusToClass, NO_PROVIDER, UNKNOWN_MODEL, type CacheOutcome, type GatewayObserver, type GatewayRequestEvent } from './gateway-observer.ts';
import { isFinalRawPiece } from '../wire/is-final-raw-piece.ts';
import { holdStreamEnd } from './hold-stream-end.ts';
import type { IngressDialect } from '../protocol/ingress-dialect.ts';
import { isModelAllowed } from '../keys/is-model-allowed.ts';
import type { KeyInfo } from '../keys/key-store.ts';
import { estimateTokenReservation, type KeyLimiter, type KeyLimitTicket } from '../limits/key-limiter.ts';
import { resolvePriority, PRIORITY_HEADER } from '../limits/priority.ts';
import { createRequestId } from './request-id.ts';
import { type AttemptRecord, UpstreamRouteError } from '../router/attempt-record.ts';
import { PromptTokenEstimate } from '../router/prompt-token-estimate.ts';
import { resolveRoute, resolveRouteUpstreamModel, type ModelFilter, type ResolvedRoute } from '../router/resolve-route.ts';
import { readUpstreamBytesOf } from '../protocol/upstream-bytes.ts';
import type { CompletionMeta } from '../router/chat-meta.ts';
import type { ModelListEntry } from '../protocol/model-list-entry.ts';
import type { StreamResult } from '../protocol/stream-relay-types.ts';
import { escapeLogText } from '../../core/escape-log-text.ts';

export interface ChatGatewayDeps {
  chat: ChatService;
  cache?: { store: ResponseCache; policy: CachePolicyConfig };
  billing?: BillingService;
  keyLimits?: KeyLimiter;
  log?: (line: string) => void;
  /** Told once about every request, however it ended (metrics). */
  observer?: GatewayObserver;
  /** The HTTP status the transport answers a failure with (for the observer); default: estimateErrorStatus. */
  errorStatus?: (error: HerdError, dialect: IngressDialect) => number;
}

export interface GatewayCaller {
  key: KeyInfo;
  headers: RequestHeaders;
  /** Aborts when the client goes away. */
  signal: AbortLink;
  /** Set by a serving-side caller (an llm model): the ledger row names it. */
  origin?: string;
  /** The wire format the client spoke; absent: OpenAI chat completions. */
  dialect?: IngressDialect;
  /**
   * The transport writes a same-dialect upstream's own bytes as they are: the JSON text attached in its
   * dialect, and RawSse pieces in streams. Absent: streams carry canonical chunks only (serving-side
   * callers, dialects without pass-through).
   */
  passThrough?: boolean;
  /** With passThrough: the client's body as sent, for an upstream of its dialect (absent for OpenAI chat, whose canonical request is its body). */
  body?: JsonObject;
}

export type { CacheOutcome };

/**
 * `cost`: the price the settlement gave the request's ledger row (a cache hit's: what it saved), so a caller
 * that shows it (an llm model's `cost` output) does not price the request a second time; undefined without billing.
 */
export type GatewayAnswer =
  | { kind: 'completion'; response: ChatResponse; meta: CompletionMeta; cache: CacheOutcome; cost?: Cost | undefined }
  | { kind: 'stream'; stream: ChatStream; cache: CacheOutcome; cost?: Promise<Cost | undefined> };

/** A settled request: its rows' commit (never rejects) and the price they record. */
interface Settled {
  committed: Promise<void>;
  cost: Cost | undefined;
}

/** One request on its way through the flow: what admission decided, read by every later step. */
interface Flight {
  request: ChatRequest;
  caller: GatewayCaller;
  /** performance.now() when handle() was called. */
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
}

/** How a request ended: the one input of settle(). */
type Ending =
  | { outcome: 'completion'; completion: ChatCompletion; overheadMs: number; cache: CacheOutcome }
  | { outcome: 'stream'; stream: ChatStream; result: StreamResult; ttftMs: number; overheadMs: number; cache: CacheOutcome; answer: TappedAnswer | undefined }
  | { outcome: 'cache-hit'; answer: Readonly<CachedAnswer>; stream: boolean; overheadMs: number }
  | { outcome: 'error'; error: HerdError; reserved: boolean };

/** What the flow knew when a request failed: the observer's labels for it. */
interface Progress {
  model: string;
  cache: CacheOutcome;
  /** Once the chat service was called, upstream time is inside the elapsed time and overhead is unknown. */
  calledUpstream: boolean;
}

const usedTokens = (u: Usage) => u.promptTokens + u.completionTokens;

export class ChatGateway {
  constructor(private readonly deps: ChatGatewayDeps) {}

  /** The models a key may list (GET /v1/models). */
  listModels(allowed?: ModelFilter): Promise<ModelListEntry[]> {
    return this.deps.chat.listModels(allowed);
  }

  health(): GatewayHealth {
    return this.deps.chat.health();
  }

  /**
   * The entry point for an authenticated, validated request in the canonical shape. Rejects with a
   * HerdError (or the caller's abort reason); a rejection has already been recorded and counted.
   */
  async handle(request: ChatRequest, caller: GatewayCaller): Promise<GatewayAnswer> {
    const t0 = performance.now();
    const progress: Progress = { model: UNKNOWN_MODEL, cache: 'off', calledUpstream: false };
    try {
      const flight = await this.admit(request, caller, t0, progress);
      try {
        const hit = await this.answerFromCache(flight);
        if (hit !== undefined) return hit;
        progress.cache = flight.policy?.read ? 'miss' : 'off';
        await this.reserveBudget(flight);
        progress.calledUpstream = true;
        return request.stream ? await this.stream(flight, progress.cache) : await this.complete(flight, progress.cache);
      } catch (err) {
        void flight.ticket?.settle(0);
        throw err;
      }
    } catch (err) {
      this.reportFailure(err, request, caller.dialect, progress, t0);
      throw err;
    }
  }

  /** The route, resolved once for the whole request, and the key's rate-limit ticket. */
  private async admit(request: ChatRequest, caller: GatewayCaller, t0: number, progress: Progress): Promise<Flight> {
    const startedAt = Date.now();
    const allowModel = (model: string) => isModelAllowed(caller.key, model);
    const priority = resolvePriority(caller.headers[PRIORITY_HEADER], caller.key.defaultPriority);
    const prompt = new PromptTokenEstimate(request);
    const route = await resolveRoute(this.deps.chat.catalog, request.model, prompt, allowModel);
    progress.model = route.model.name;
    // Tokenizing the prompt and holding a reservation cost CPU and a synchronous ledger write on the hot
    // path, so they happen only where a decision needs them: a key with a budget or a TPM limit.
    // Without a budget the settlement alone charges the exact cost (finish with reserved: false).
    const reserving = this.deps.billing !== undefined && (caller.key.budgetDayMicros !== undefined || caller.key.budgetMonthMicros !== undefined);
    const promptTokens = reserving || caller.key.tpm !== undefined ? await prompt.exact() : 0;
    const ticket = this.deps.keyLimits ? await this.deps.keyLimits.reserve(caller.key, estimateTokenReservation(promptTokens, request)) : undefined;
    const policy = this.deps.cache ? evaluateCachePolicy(request, caller.headers, this.deps.cache.policy) : undefined;
    const requestId = createRequestId(startedAt);
    const billing = this.deps.billing;
    // The intent goes out before the call, so a process killed mid-call still leaves an attempt row.
    const onAttemptStart = billing
      ? (attempt: number, r: AttemptRecord) =>
          billing.intend({
            requestId,
            attempt,
            keyId: caller.key.id,
            requestedModel: request.model,
            model: r.model,
            provider: r.provider,
            upstreamModel: r.upstreamModel,
            startedAt: Date.now(),
          })
      : undefined;
    return {
      request,
      caller,
      t0,
      route,
      base: {
        requestId,
        key: { id: caller.key.id, name: caller.key.name },
        origin: caller.origin,
        dialect: caller.dialect ?? 'openai-chat',
        routeRule: route.rule,
        requestedModel: request.model,
        priority,
        startedAt,
        reserved: reserving,
      },
      ticket,
      context: {
        signal: caller.signal,
        allowModel,
        priority,
        prompt,
        route,
        onAttemptStart,
        passThrough: caller.passThrough === true ? { dialect: caller.dialect ?? 'openai-chat', body: caller.body } : undefined,
        session: this.deps.chat.resolveSession?.(request, { headers: caller.headers, dialect: caller.dialect ?? 'openai-chat', body: caller.body }, route),
      },
      policy,
      cacheKey:
        policy?.read || policy?.write
          ? // A pattern route may send the client's own id upstream ({model}): two ids are two upstream models.
            computeCacheKey({
              request,
              model: route.kind === 'pattern' ? `${route.model.name} ${route.requested}` : route.model.name,
              space: caller.dialect === 'openai-completions' ? 'completions' : undefined,
            })
          : undefined,
      promptTokens,
    };
  }

  private async answerFromCache(flight: Flight): Promise<GatewayAnswer | undefined> {
    const { policy, cacheKey, request, route } = flight;
    if (!policy?.read || cacheKey === undefined || this.deps.cache === undefined) return undefined;
    const model = route.model.name;
    const hit = await this.deps.cache.store.lookup(cacheKey, (a) => evaluateCachedAnswer(a.response, { model, optedIn: policy.optedIn }).cacheable);
    if (!hit) return undefined;
    const answer = hit.answer;
    const meta = createCacheHitMeta(answer, {
      requestedModel: request.model,
      route: route.kind,
      routeRule: route.rule,
      ...(route.tier ? { tier: route.tier } : {}),
      overheadMs: performance.now() - flight.t0,
    });
    const stream = request.stream === true;
    const { committed, cost } = this.settle(flight, { outcome: 'cache-hit', answer, stream, overheadMs: performance.now() - flight.t0 });
    // The stored upstream bytes, when this caller takes bytes of their dialect, mode and variant; else canonical.
    const bytes = describeByteReplay(flight.context.passThrough, request);
    if (stream) {
      const cached = createCachedStream(answer, { includeUsage: request.stream_options?.include_usage === true, bytes });
      return { kind: 'stream', stream: { meta, ...cached, chunks: holdStreamEnd(cached.chunks, () => committed, isFinalRawPiece) }, cache: 'hit', cost: Promise.resolve(cost) };
    }
    await committed;
    return { kind: 'completion', response: convertCachedToResponse(answer, { bytes }), meta, cache: 'hit', cost };
  }

  private async reserveBudget(flight: Flight): Promise<void> {
    const { billing } = this.deps;
    const { caller, request, base } = flight;
    if (billing === undefined || !base.reserved) return;
    const estimateMicros = billing.estimateForModel({
      model: flight.route.model,
      upstreamModelOf: (deployment) => resolveRouteUpstreamModel(flight.route, deployment),
      promptTokens: flight.promptTokens,
      maxCompletionTokens: request.max_completion_tokens ?? request.max_tokens,
    });
    try {
      await billing.reserve({
        keyId: caller.key.id,
        requestId: base.requestId,
        estimateMicros,
        budgets: { dayMicros: caller.key.budgetDayMicros, monthMicros: caller.key.budgetMonthMicros },
      });
    } catch (err) {
      void this.settle(flight, { outcome: 'error', error: toHerdError(err), reserved: false });
      throw err;
    }
  }

  private async complete(flight: Flight, cache: CacheOutcome): Promise<GatewayAnswer> {
    let completion: ChatCompletion;
    try {
      completion = await this.deps.chat.complete(flight.request, flight.context);
    } catch (err) {
      void this.settle(flight, { outcome: 'error', error: toHerdError(err), reserved: flight.base.reserved ?? false });
      throw err;
    }
    // The answer waits for its rows' commit (group commit: one transaction per event-loop turn), never
    // for the reservation's settlement, the cache write or metrics.
    const { meta } = completion;
    const overheadMs = Math.max(0, performance.now() - flight.t0 - meta.upstreamMs - meta.waitedMs);
    const { committed, cost } = this.settle(flight, { outcome: 'completion', completion, overheadMs, cache });
    await committed;
    return { kind: 'completion', response: completion.response, meta: completion.meta, cache, cost };
  }

  private async stream(flight: Flight, cache: CacheOutcome): Promise<GatewayAnswer> {
    let opened: ChatStream;
    try {
      opened = await this.deps.chat.stream(flight.request, flight.context);
    } catch (err) {
      void this.settle(flight, { outcome: 'error', error: toHerdError(err), reserved: flight.base.reserved ?? false });
      throw err;
    }
    const ttftMs = performance.now() - flight.t0;
    const { meta } = opened;
    // Herd's part of the time to first chunk; the rest of a stream's life is the upstream's and the client's.
    const overheadMs = Math.max(0, ttftMs - meta.upstreamMs - meta.waitedMs);
    const writing = flight.policy?.write === true && flight.cacheKey !== undefined && this.deps.cache !== undefined;
    const tapped = writing ? tapStreamForCache(opened) : undefined;
    const relay = tapped?.relay ?? opened;
    // The relay's result settles however the stream ends (completed, failed, or cancelled with nobody
    // reading), so settlement starts here, in the flow; the stream's last read waits for the rows' commit.
    const settled = relay.result.then((result) => this.settle(flight, { outcome: 'stream', stream: opened, result, ttftMs, overheadMs, cache, answer: tapped?.assemble(result) }));
    const chunks = this.deps.billing ? holdStreamEnd(relay.chunks, () => settled.then((s) => s.committed), isFinalRawPiece) : relay.chunks;
    return {
      kind: 'stream',
      stream: { meta, chunks, cancel: relay.cancel, result: relay.result },
      cache,
      cost: settled.then(
        (s) => s.cost,
        () => undefined,
      ),
    };
  }

  /**
   * Settles a request however it ended: queues its ledger rows and returns their commit (never
   * rejects) and the price they record. Reservation settlement, the TPM correction, the cache write and
   * metrics run after the current event-loop turn, in which the transport writes the answer; none of them
   * changes it.
   */
  private settle(flight: Flight, ending: Ending): Settled {
    const finishing = this.deps.billing?.finishDurably(this.describeFinish(flight, ending));
    const billed = finishing?.done;
    void billed?.catch((err: unknown) => this.deps.log?.(`ledger: ${escapeLogText(String(err))}`));
    if (ending.outcome === 'error') {
      // A failure is counted by handle()'s catch; the ticket is released there.
      return { committed: Promise.resolve(), cost: undefined };
    }
    if (ending.outcome === 'cache-hit') void flight.ticket?.settle(0);
    setImmediate(() => {
      try {
        this.afterAnswer(flight, ending, billed);
      } catch (err) {
        this.deps.log?.(`settling request ${escapeLogText(flight.base.requestId)}: ${escapeLogText(String(err))}`);
      }
    });
    return { committed: finishing ? finishing.committed.catch(() => undefined) : Promise.resolve(), cost: finishing?.cost };
  }

  private describeFinish(flight: Flight, ending: Ending): FinishInput {
    const { base, t0 } = flight;
    const latencyMs = performance.now() - t0;
    switch (ending.outcome) {
      case 'completion':
        return { outcome: 'completion', meta: ending.completion.meta, latencyMs, httpStatus: 200, ...base };
      case 'stream':
        return { outcome: 'stream', meta: ending.stream.meta, result: ending.result, ttftMs: ending.ttftMs, latencyMs, httpStatus: 200, ...base };
      case 'cache-hit': {
        const { answer } = ending;
        return {
          outcome: 'cache-hit',
          model: answer.model,
          provider: answer.provider,
          upstreamModel: answer.upstreamModel,
          usage: answer.usage,
          latencyMs,
          httpStatus: 200,
          ...base,
          reserved: false,
        };
      }
      case 'error':
        return { outcome: 'error', error: ending.error, httpStatus: this.statusOf(ending.error, base.dialect ?? 'openai-chat'), latencyMs, ...base, reserved: ending.reserved };
    }
  }

  /** The answered request's TPM correction, cache write and metrics. */
  private afterAnswer(flight: Flight, ending: Exclude<Ending, { outcome: 'error' }>, billed: Promise<FinishResult> | undefined): void {
    const startedAt = flight.base.startedAt;
    switch (ending.outcome) {
      case 'cache-hit': {
        const { answer } = ending;
        this.reportAnswer({ model: answer.model, provider: answer.provider, statusClass: '2xx', cache: 'hit', stream: ending.stream, overheadMs: ending.overheadMs }, billed, {
          usage: answer.usage,
          startedAt,
        });
        return;
      }
      case 'completion': {
        const { response, meta } = ending.completion;
        void flight.ticket?.settle(usedTokens(meta.usage));
        this.writeCache(flight, response, meta, meta.usage, billed, readUpstreamBytesOf(response));
        this.reportAnswer(
          {
            model: meta.model,
            provider: meta.provider,
            statusClass: '2xx',
            cache: ending.cache,
            stream: false,
            tokens: meta.usage,
            upstreamMs: meta.upstreamMs,
            queuedMs: meta.queuedMs,
            overheadMs: ending.overheadMs,
          },
          billed,
          { usage: meta.usage, startedAt },
        );
        return;
      }
      case 'stream': {
        const { meta } = ending.stream;
        const { result } = ending;
        void flight.ticket?.settle(usedTokens(result.usage));
        if (ending.answer !== undefined) this.writeCache(flight, ending.answer.response, meta, result.usage, billed, ending.answer.bytes);
        this.reportAnswer(
          {
            model: meta.model,
            provider: meta.provider,
            statusClass: '2xx',
            cache: ending.cache,
            stream: true,
            tokens: result.usage,
            upstreamMs: meta.upstreamMs + result.streamMs,
            ttftMs: ending.ttftMs,
            queuedMs: meta.queuedMs,
            overheadMs: ending.overheadMs,
          },
          billed,
          { usage: result.usage, startedAt },
        );
        return;
      }
    }
  }

  /**
   * Stores an answer the policy allows, with what it cost once billing priced it (0 without billing), and
   * the upstream bytes the client got when a later request of its dialect, mode and variant may replay them.
   */
  private writeCache(
    flight: Flight,
    response: ChatResponse,
    meta: { provider: string; upstreamModel: string },
    usage: Usage,
    billed: Promise<FinishResult> | undefined,
    captured: CapturedBytes | undefined,
  ): void {
    const { policy, cacheKey } = flight;
    const cache = this.deps.cache?.store;
    if (!policy?.write || cacheKey === undefined || cache === undefined) return;
    if (!evaluateCachedAnswer(response, { model: flight.route.model.name, optedIn: policy.optedIn }).cacheable) return;
    void Promise.resolve(billed)
      .then(
        (r) => r?.cost?.costMicros ?? 0,
        () => 0,
      )
      .then((costMicros) => {
        const bytes = captureCachedBytes(response, captured, describeByteReplay(flight.context.passThrough, flight.request));
        return cache.store(cacheKey, { response, bytes, usage, provider: meta.provider, upstreamModel: meta.upstreamModel, costMicros });
      })
      .catch((err: unknown) => this.deps.log?.(`cache: ${escapeLogText(String(err))}`));
  }

  /**
   * Reports an answered request once billing has priced it, so metrics and the ledger hold the same
   * cost; at once without billing. If the ledger cannot settle, the cost is priced here instead.
   */
  private reportAnswer(event: GatewayRequestEvent, billed: Promise<FinishResult> | undefined, priced: { usage: Usage; startedAt: number }): void {
    if (this.deps.observer === undefined) return;
    if (billed === undefined) {
      this.notify(event);
      return;
    }
    const settle = (cost: Cost | undefined) => {
      if (cost !== undefined) {
        if (event.cache === 'hit') event.savedUsdMicros = cost.usdMicros;
        else event.usdMicros = cost.usdMicros;
      }
      this.notify(event);
    };
    billed.then(
      (r) => settle(r.cost),
      () => settle(this.priceQuietly(event, priced)),
    );
  }

  private priceQuietly(event: GatewayRequestEvent, priced: { usage: Usage; startedAt: number }): Cost | undefined {
    try {
      return this.deps.billing?.price({ provider: event.provider, model: event.model, usage: priced.usage, atMs: priced.startedAt });
    } catch {
      return undefined;
    }
  }

  /**
   * A request the transport refused before it reached handle() (no valid key, a body that does not
   * parse or validate): counted with the others, under no model and no provider.
   */
  reportRefused(error: HerdError, stream: boolean, dialect: IngressDialect = 'openai-chat'): void {
    if (this.deps.observer === undefined) return;
    this.notify({ model: UNKNOWN_MODEL, provider: NO_PROVIDER, statusClass: mapStatusToClass(this.statusOf(error, dialect)), cache: 'off', stream });
  }

  /** A failed request: labelled by the last upstream tried, if any, with the status the transport will answer. */
  private reportFailure(err: unknown, request: ChatRequest, dialect: IngressDialect | undefined, progress: Progress, t0: number): void {
    if (this.deps.observer === undefined) return;
    const error = toHerdError(err);
    const last = error instanceof UpstreamRouteError ? error.attempts.at(-1) : undefined;
    const event: GatewayRequestEvent = {
      model: last?.model ?? progress.model,
      provider: last?.provider ?? NO_PROVIDER,
      statusClass: mapStatusToClass(this.statusOf(error, dialect ?? 'openai-chat')),
      cache: progress.cache,
      stream: request.stream === true,
    };
    if (!progress.calledUpstream) event.overheadMs = performance.now() - t0;
    this.notify(event);
  }

  /** A broken observer must never fail or double-report a request. */
  private notify(event: GatewayRequestEvent): void {
    try {
      this.deps.observer?.onRequestFinished(event);
    } catch (err) {
      this.deps.log?.(`gateway observer: ${escapeLogText(String(err))}`);
    }
  }

  /** The HTTP status the client gets for a failure (the ledger's http_status, the metrics' class). */
  private statusOf(error: HerdError, dialect: IngressDialect): number {
    return this.deps.errorStatus ? this.deps.errorStatus(error, dialect) : estimateErrorStatus(error);
  }
}
