// One client request through the gateway, in order: resolve the model (access checked), the key's
// rate limits, the exact-match cache, the budget reservation, the chat service, then settlement —
// billing, TPM correction and the cache write — however the request ends. Transports call this.
import type { AbortLink } from '../core/abort-link.ts';
import { type HerdError, toHerdError } from '../core/errors.ts';
import type { BillingService, FinishBase, FinishResult } from './billing/billing-service.ts';
import type { Cost } from './billing/price-usage.ts';
import { evaluateCachedAnswer, evaluateCachePolicy, type CachePolicyConfig, type CachePolicyDecision, type RequestHeaders } from './cache/cache-policy.ts';
import { computeCacheKey } from './cache/compute-cache-key.ts';
import { convertCachedToResponse, createCacheHitMeta, createCachedStream } from './cache/replay-cached-answer.ts';
import type { ResponseCache } from './cache/response-cache.ts';
import { tapStreamForCache } from './cache/tap-stream-for-cache.ts';
import { holdStreamEnd } from './hold-stream-end.ts';
import type { IngressDialect } from './ingress-dialect.ts';
import type { ChatCompletion, ChatService, ChatStream, CompletionMeta } from './chat-service.ts';
import type { ChatRequest, ChatResponse, Usage } from './chat-types.ts';
import { estimateErrorStatus, mapStatusToClass, NO_PROVIDER, UNKNOWN_MODEL, type CacheOutcome, type GatewayObserver, type GatewayRequestEvent } from './gateway-observer.ts';
import { isModelAllowed } from './keys/is-model-allowed.ts';
import type { KeyInfo } from './keys/key-store.ts';
import { estimateTokenReservation, type KeyLimiter, type KeyLimitTicket } from './limits/key-limiter.ts';
import { resolvePriority, PRIORITY_HEADER, type Priority } from './limits/priority.ts';
import { UpstreamRouteError } from './router/attempt-record.ts';
import { PromptTokenEstimate } from './router/prompt-token-estimate.ts';
import { createRequestId } from './request-id.ts';
import { resolveRoute } from './router/resolve-route.ts';
import type { StreamResult } from './stream-relay.ts';

export interface ChatGatewayDeps {
  chat: ChatService;
  cache?: { store: ResponseCache; policy: CachePolicyConfig };
  billing?: BillingService;
  keyLimits?: KeyLimiter;
  log?: (line: string) => void;
  /** Told once about every request, however it ended (metrics). */
  observer?: GatewayObserver;
  /** The HTTP status the transport answers a failure with (for the observer); default: estimateErrorStatus. */
  errorStatus?: (error: HerdError) => number;
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
}

export type { CacheOutcome };

export type GatewayAnswer = { kind: 'completion'; response: ChatResponse; meta: CompletionMeta; cache: CacheOutcome } | { kind: 'stream'; stream: ChatStream; cache: CacheOutcome };

const usedTokens = (u: Usage) => u.promptTokens + u.completionTokens;

/** What the flow knew when a request failed: the observer's labels for it. */
interface Progress {
  model: string;
  cache: CacheOutcome;
  /** Once the chat service was called, upstream time is inside the elapsed time and overhead is unknown. */
  calledUpstream: boolean;
}

export class ChatGateway {
  constructor(private readonly deps: ChatGatewayDeps) {}

  async handle(request: ChatRequest, caller: GatewayCaller): Promise<GatewayAnswer> {
    const t0 = performance.now();
    const progress: Progress = { model: UNKNOWN_MODEL, cache: 'off', calledUpstream: false };
    try {
      return await this.run(request, caller, t0, progress);
    } catch (err) {
      this.reportFailure(err, request, progress, t0);
      throw err;
    }
  }

  private async run(request: ChatRequest, caller: GatewayCaller, t0: number, progress: Progress): Promise<GatewayAnswer> {
    const { chat, billing, keyLimits } = this.deps;
    const startedAt = Date.now();
    const requestId = createRequestId(startedAt);
    const allowModel = (model: string) => isModelAllowed(caller.key, model);
    const priority: Priority = resolvePriority(caller.headers[PRIORITY_HEADER], caller.key.defaultPriority);
    const prompt = new PromptTokenEstimate(request);
    const route = await resolveRoute(chat.catalog, request.model, prompt, allowModel);
    const model = route.model.name;
    progress.model = model;

    // Tokenizing the prompt and holding a reservation cost CPU and a synchronous ledger write on the hot
    // path, so they happen only where a decision needs them: a key with a budget or a TPM limit.
    // Without a budget the settlement alone charges the exact cost (finish with reserved: false).
    const hasBudget = caller.key.budgetDayMicros !== undefined || caller.key.budgetMonthMicros !== undefined;
    const reserving = billing !== undefined && hasBudget;
    const promptTokens = reserving || caller.key.tpm !== undefined ? await prompt.exact() : 0;
    const ticket: KeyLimitTicket | undefined = keyLimits ? await keyLimits.reserve(caller.key, estimateTokenReservation(promptTokens, request)) : undefined;
    const base = { requestId, key: { id: caller.key.id, name: caller.key.name }, origin: caller.origin, requestedModel: request.model, priority, startedAt, reserved: reserving };

    try {
      const policy = this.cachePolicy(request, caller.headers);
      const cacheKey = policy?.read || policy?.write ? computeCacheKey({ request, model }) : undefined;
      if (policy?.read && cacheKey) {
        const hit = await this.deps.cache?.store.lookup(cacheKey, (a) => evaluateCachedAnswer(a.response, { model, optedIn: policy.optedIn }).cacheable);
        if (hit) {
          const answer = hit.answer;
          const meta = createCacheHitMeta(answer, {
            requestedModel: request.model,
            route: route.kind,
            ...(route.tier ? { tier: route.tier } : {}),
            overheadMs: performance.now() - t0,
          });
          const finishing = billing?.finishDurably({
            outcome: 'cache-hit',
            model: answer.model,
            provider: answer.provider,
            upstreamModel: answer.upstreamModel,
            usage: answer.usage,
            latencyMs: performance.now() - t0,
            httpStatus: 200,
            ...base,
            reserved: false,
          });
          const billed = finishing?.done;
          void billed?.catch((err: unknown) => this.deps.log?.(`ledger: ${String(err)}`));
          void ticket?.settle(0);
          const stream = request.stream === true;
          let result: GatewayAnswer;
          if (stream) {
            const cached = createCachedStream(answer, { includeUsage: request.stream_options?.include_usage === true });
            const chunks = finishing ? holdStreamEnd(cached.chunks, () => finishing.committed.catch(() => undefined)) : cached.chunks;
            result = { kind: 'stream', stream: { meta, ...cached, chunks }, cache: 'hit' };
          } else {
            await finishing?.committed.catch(() => undefined);
            result = { kind: 'completion', response: convertCachedToResponse(answer), meta, cache: 'hit' };
          }
          this.reportAnswer({ model: answer.model, provider: answer.provider, statusClass: '2xx', cache: 'hit', stream, overheadMs: performance.now() - t0 }, billed, {
            usage: answer.usage,
            startedAt,
          });
          return result;
        }
      }
      const cacheOutcome: CacheOutcome = policy?.read ? 'miss' : 'off';
      progress.cache = cacheOutcome;

      if (billing && reserving) {
        const estimateMicros = billing.estimate({ model: request.model, promptTokens, maxCompletionTokens: request.max_completion_tokens ?? request.max_tokens });
        await billing
          .reserve({ keyId: caller.key.id, requestId, estimateMicros, budgets: { dayMicros: caller.key.budgetDayMicros, monthMicros: caller.key.budgetMonthMicros } })
          .catch((err: unknown) => {
            const error = toHerdError(err);
            void billing.finish({ ...base, outcome: 'error', error, httpStatus: this.statusOf(error), reserved: false, latencyMs: performance.now() - t0 }).catch(() => undefined);
            throw err;
          });
      }
      const context = { signal: caller.signal, allowModel, priority, prompt };
      progress.calledUpstream = true;

      if (request.stream) {
        let stream: ChatStream;
        try {
          stream = await chat.stream(request, context);
        } catch (err) {
          this.finishError(base, err, t0);
          throw err;
        }
        const ttftMs = performance.now() - t0;
        let relay = stream as ChatStream;
        if (policy?.write && cacheKey && this.deps.cache) {
          const cache = this.deps.cache.store;
          relay = {
            meta: stream.meta,
            ...tapStreamForCache(stream, (done) => {
              if (evaluateCachedAnswer(done.response, { model, optedIn: policy.optedIn }).cacheable) {
                void cache.store(cacheKey, {
                  response: done.response,
                  usage: done.result.usage,
                  provider: stream.meta.provider,
                  upstreamModel: stream.meta.upstreamModel,
                  costMicros: 0,
                });
              }
            }),
          };
        }
        const { meta } = stream;
        // Herd's part of the time to first chunk; the rest of a stream's life is the upstream's and the client's.
        const overheadMs = Math.max(0, performance.now() - t0 - meta.upstreamMs - meta.waitedMs);
        // The stream's end waits for its rows' commit (an answered stream is never missing from the
        // ledger); settling, the TPM correction and metrics run after the last bytes are written.
        let finishing: ReturnType<BillingService['finishDurably']> | undefined;
        const finishStream = (result: StreamResult) =>
          (finishing ??= billing?.finishDurably({ outcome: 'stream', meta, result, ttftMs, latencyMs: performance.now() - t0, httpStatus: 200, ...base }));
        if (billing)
          relay = {
            ...relay,
            chunks: holdStreamEnd(relay.chunks, async () => {
              await finishStream(await stream.result)?.committed.catch(() => undefined);
            }),
          };
        void stream.result.then((result) => {
          this.settleLater(requestId, () => {
            void ticket?.settle(usedTokens(result.usage));
            const billed = finishStream(result)?.done;
            void billed?.catch((err: unknown) => this.deps.log?.(`ledger: ${String(err)}`));
            this.reportAnswer(
              {
                model: meta.model,
                provider: meta.provider,
                statusClass: '2xx',
                cache: cacheOutcome,
                stream: true,
                tokens: result.usage,
                upstreamMs: meta.upstreamMs + result.streamMs,
                ttftMs,
                queuedMs: meta.queuedMs,
                overheadMs,
              },
              billed,
              { usage: result.usage, startedAt },
            );
          });
        });
        return { kind: 'stream', stream: relay, cache: cacheOutcome };
      }

      let completion: ChatCompletion;
      try {
        completion = await chat.complete(request, context);
      } catch (err) {
        this.finishError(base, err, t0);
        throw err;
      }
      const { response, meta } = completion;
      const latencyMs = performance.now() - t0;
      const overheadMs = Math.max(0, latencyMs - meta.upstreamMs - meta.waitedMs);
      // The answer waits for its rows' commit (group commit: one transaction per event-loop turn), never
      // for the settlement, the cache write or metrics.
      const finishing = billing?.finishDurably({ outcome: 'completion', meta, latencyMs, httpStatus: 200, ...base });
      this.settleLater(requestId, () => {
        void ticket?.settle(usedTokens(meta.usage));
        const billed = finishing?.done;
        if (policy?.write && cacheKey && this.deps.cache && evaluateCachedAnswer(response, { model, optedIn: policy.optedIn }).cacheable) {
          const cache = this.deps.cache.store;
          void Promise.resolve(billed)
            .then(
              (r) => r?.cost?.costMicros ?? 0,
              () => 0,
            )
            .then((costMicros) => cache.store(cacheKey, { response, usage: meta.usage, provider: meta.provider, upstreamModel: meta.upstreamModel, costMicros }));
        } else if (billed) {
          void billed.catch((err: unknown) => this.deps.log?.(`ledger: ${String(err)}`));
        }
        this.reportAnswer(
          {
            model: meta.model,
            provider: meta.provider,
            statusClass: '2xx',
            cache: cacheOutcome,
            stream: false,
            tokens: meta.usage,
            upstreamMs: meta.upstreamMs,
            queuedMs: meta.queuedMs,
            overheadMs,
          },
          billed,
          { usage: meta.usage, startedAt },
        );
      });
      await finishing?.committed.catch(() => undefined);
      return { kind: 'completion', response, meta, cache: cacheOutcome };
    } catch (err) {
      void ticket?.settle(0);
      throw err;
    }
  }

  /**
   * Runs a request's settlement after the current turn of the event loop, in which the transport writes
   * the answer: settling changes nothing in it. A failure here is logged, never thrown into the loop.
   */
  private settleLater(requestId: string, settle: () => void): void {
    setImmediate(() => {
      try {
        settle();
      } catch (err) {
        this.deps.log?.(`settling request ${requestId}: ${String(err)}`);
      }
    });
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
  reportRefused(error: HerdError, stream: boolean): void {
    if (this.deps.observer === undefined) return;
    this.notify({ model: UNKNOWN_MODEL, provider: NO_PROVIDER, statusClass: mapStatusToClass(this.statusOf(error)), cache: 'off', stream });
  }

  /** A failed request: labelled by the last upstream tried, if any, with the status the transport will answer. */
  private reportFailure(err: unknown, request: ChatRequest, progress: Progress, t0: number): void {
    if (this.deps.observer === undefined) return;
    const error = toHerdError(err);
    const last = error instanceof UpstreamRouteError ? error.attempts.at(-1) : undefined;
    const event: GatewayRequestEvent = {
      model: last?.model ?? progress.model,
      provider: last?.provider ?? NO_PROVIDER,
      statusClass: mapStatusToClass(this.statusOf(error)),
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
      this.deps.log?.(`gateway observer: ${String(err)}`);
    }
  }

  private cachePolicy(request: ChatRequest, headers: RequestHeaders): CachePolicyDecision | undefined {
    const cache = this.deps.cache;
    return cache ? evaluateCachePolicy(request, headers, cache.policy) : undefined;
  }

  private finishError(base: FinishBase, err: unknown, t0: number): void {
    const error = toHerdError(err);
    void this.deps.billing
      ?.finish({ outcome: 'error', error, httpStatus: this.statusOf(error), latencyMs: performance.now() - t0, ...base })
      .catch((e: unknown) => this.deps.log?.(`ledger: ${String(e)}`));
  }

  /** The HTTP status the client gets for a failure (the ledger's http_status, the metrics' class). */
  private statusOf(error: HerdError): number {
    return (this.deps.errorStatus ?? estimateErrorStatus)(error);
  }
}
