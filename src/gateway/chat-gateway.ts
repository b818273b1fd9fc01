// One client request through the gateway, in order: resolve the model (access checked), the key's
// rate limits, the exact-match cache, the budget reservation, the chat service, then settlement —
// billing, TPM correction and the cache write — however the request ends. Transports call this.
import { randomUUID } from 'node:crypto';
import { HerdError, toHerdError } from '../core/errors.ts';
import type { BillingService } from './billing/billing-service.ts';
import { evaluateCachedAnswer, evaluateCachePolicy, type CachePolicyConfig, type CachePolicyDecision, type RequestHeaders } from './cache/cache-policy.ts';
import { computeCacheKey } from './cache/compute-cache-key.ts';
import { convertCachedToResponse, createCacheHitMeta, createCachedStream } from './cache/replay-cached-answer.ts';
import type { ResponseCache } from './cache/response-cache.ts';
import { tapStreamForCache } from './cache/tap-stream-for-cache.ts';
import type { ChatMeta, ChatService, ChatStream } from './chat-service.ts';
import type { ChatRequest, ChatResponse, Usage } from './chat-types.ts';
import { isModelAllowed } from './keys/is-model-allowed.ts';
import type { KeyInfo } from './keys/key-store.ts';
import { estimateTokenReservation, type KeyLimiter, type KeyLimitTicket } from './limits/key-limiter.ts';
import { resolvePriority, PRIORITY_HEADER, type Priority } from './limits/priority.ts';
import { PromptTokenEstimate } from './router/prompt-token-estimate.ts';
import { resolveRoute } from './router/resolve-route.ts';

export interface ChatGatewayDeps {
  chat: ChatService;
  cache?: { store: ResponseCache; policy: CachePolicyConfig };
  billing?: BillingService;
  keyLimits?: KeyLimiter;
  log?: (line: string) => void;
}

export interface GatewayCaller {
  key: KeyInfo;
  headers: RequestHeaders;
  /** Aborts when the client goes away. */
  signal: AbortSignal;
}

export type CacheOutcome = 'hit' | 'miss' | 'off';

export type GatewayAnswer =
  | { kind: 'completion'; response: ChatResponse; meta: ChatMeta; cache: CacheOutcome }
  | { kind: 'stream'; stream: ChatStream; cache: CacheOutcome };

const usedTokens = (u: Usage) => u.promptTokens + u.completionTokens;

export class ChatGateway {
  constructor(private readonly deps: ChatGatewayDeps) {}

  async handle(request: ChatRequest, caller: GatewayCaller): Promise<GatewayAnswer> {
    const { chat, billing, keyLimits } = this.deps;
    const startedAt = Date.now();
    const t0 = performance.now();
    const requestId = randomUUID();
    const allowModel = (model: string) => isModelAllowed(caller.key, model);
    const priority: Priority = resolvePriority(caller.headers[PRIORITY_HEADER], caller.key.defaultPriority);
    const prompt = new PromptTokenEstimate(request);
    const route = await resolveRoute(chat.catalog, request.model, prompt, allowModel);
    const model = route.model.name;

    const needsTokens = billing !== undefined || caller.key.tpm !== undefined;
    const promptTokens = needsTokens ? await prompt.exact() : 0;
    const ticket: KeyLimitTicket | undefined = keyLimits ? await keyLimits.reserve(caller.key, estimateTokenReservation(promptTokens, request)) : undefined;
    const base = { requestId, key: { id: caller.key.id, name: caller.key.name }, requestedModel: request.model, priority, startedAt };

    try {
      const policy = this.cachePolicy(request, caller.headers);
      const cacheKey = policy?.read || policy?.write ? computeCacheKey({ request, model }) : undefined;
      if (policy?.read && cacheKey) {
        const hit = await this.deps.cache?.store.lookup(cacheKey, (a) => evaluateCachedAnswer(a.response, { model, optedIn: policy.optedIn }).cacheable);
        if (hit) {
          const answer = hit.answer;
          const meta = createCacheHitMeta(answer, { requestedModel: request.model, route: route.kind, ...(route.tier ? { tier: route.tier } : {}), overheadMs: performance.now() - t0 });
          void billing?.finish({ ...base, outcome: 'cache-hit', reserved: false, model: answer.model, provider: answer.provider, upstreamModel: answer.upstreamModel, usage: answer.usage, latencyMs: performance.now() - t0 })
            .catch((err: unknown) => this.deps.log?.(`ledger: ${String(err)}`));
          void ticket?.settle(0);
          if (request.stream) {
            const relay = createCachedStream(answer, { includeUsage: request.stream_options?.include_usage === true });
            return { kind: 'stream', stream: { ...relay, meta }, cache: 'hit' };
          }
          return { kind: 'completion', response: convertCachedToResponse(answer), meta, cache: 'hit' };
        }
      }
      const cacheOutcome: CacheOutcome = policy?.read ? 'miss' : 'off';

      if (billing) {
        const estimateMicros = billing.estimate({ model: request.model, promptTokens, maxCompletionTokens: request.max_completion_tokens ?? request.max_tokens });
        await billing.reserve({ keyId: caller.key.id, requestId, estimateMicros, budgets: { dayMicros: caller.key.budgetDayMicros, monthMicros: caller.key.budgetMonthMicros } })
          .catch((err: unknown) => {
            void billing.finish({ ...base, outcome: 'error', error: toHerdError(err), reserved: false, latencyMs: performance.now() - t0 }).catch(() => undefined);
            throw err;
          });
      }
      const context = { signal: caller.signal, allowModel, priority };

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
          relay = { ...tapStreamForCache(stream, (done) => {
            if (evaluateCachedAnswer(done.response, { model, optedIn: policy.optedIn }).cacheable) {
              void cache.store(cacheKey, { response: done.response, usage: done.result.usage, provider: stream.meta.provider, upstreamModel: stream.meta.upstreamModel, costMicros: 0 });
            }
          }), meta: stream.meta };
        }
        void stream.result.then((result) => {
          void ticket?.settle(usedTokens(result.usage));
          return billing?.finish({ ...base, outcome: 'stream', meta: stream.meta, result, ttftMs, latencyMs: performance.now() - t0 });
        }).catch((err: unknown) => this.deps.log?.(`ledger: ${String(err)}`));
        return { kind: 'stream', stream: relay, cache: cacheOutcome };
      }

      let completion;
      try {
        completion = await chat.complete(request, context);
      } catch (err) {
        this.finishError(base, err, t0);
        throw err;
      }
      const { response, meta } = completion;
      void ticket?.settle(usedTokens(meta.usage));
      const billed = billing?.finish({ ...base, outcome: 'completion', meta, latencyMs: performance.now() - t0, httpStatus: 200 });
      if (policy?.write && cacheKey && this.deps.cache && evaluateCachedAnswer(response, { model, optedIn: policy.optedIn }).cacheable) {
        const cache = this.deps.cache.store;
        void Promise.resolve(billed).then((r) => r?.cost?.costMicros ?? 0, () => 0).then((costMicros) =>
          cache.store(cacheKey, { response, usage: meta.usage, provider: meta.provider, upstreamModel: meta.upstreamModel, costMicros }));
      } else if (billed) {
        void billed.catch((err: unknown) => this.deps.log?.(`ledger: ${String(err)}`));
      }
      return { kind: 'completion', response, meta, cache: cacheOutcome };
    } catch (err) {
      void ticket?.settle(0);
      throw err;
    }
  }

  private cachePolicy(request: ChatRequest, headers: RequestHeaders): CachePolicyDecision | undefined {
    const cache = this.deps.cache;
    return cache ? evaluateCachePolicy(request, headers, cache.policy) : undefined;
  }

  private finishError(base: Parameters<BillingService['finish']>[0] extends infer F ? Omit<Extract<F, { outcome: 'error' }>, 'outcome' | 'error'> : never, err: unknown, t0: number): void {
    const error = err instanceof HerdError ? err : toHerdError(err);
    void this.deps.billing?.finish({ ...base, outcome: 'error', error, latencyMs: performance.now() - t0 }).catch((e: unknown) => this.deps.log?.(`ledger: ${String(e)}`));
  }
}
