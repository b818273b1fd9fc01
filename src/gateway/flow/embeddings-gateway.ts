// One POST /v1/embeddings through the gateway, in order: resolve the model (an embedding model the key
// may use), check `dimensions`, the key's RPM/TPM, the budget reservation, the routed attempts (the one
// retry loop: strategy, breakers, retries, fallbacks, admission), then the ledger rows and metrics.
import type { ModelKind } from '../../config/gateway-config-schema.ts';
import { type AbortLink, LightAbortController } from '../../core/abort-link.ts';
import { systemClock, type Clock } from '../../core/clock.ts';
import { HerdError, toHerdError } from '../../core/errors.ts';
import type { BillingService, FinishBase, FinishResult } from '../billing/billing-service.ts';
import type { GatewayCaller } from './chat-gateway.ts';
import type { ChatRequest, Usage } from '../protocol/chat-types.ts';
import { createProviders } from './create-providers.ts';
import { estimateErrorStatus, mapStatusToClass, NO_PROVIDER, UNKNOWN_MODEL, type GatewayObserver, type GatewayRequestEvent } from './gateway-observer.ts';
import { isModelAllowed } from '../keys/is-model-allowed.ts';
import type { Admission } from '../limits/admission.ts';
import type { KeyLimiter, KeyLimitTicket } from '../limits/key-limiter.ts';
import { PRIORITY_HEADER, resolvePriority } from '../limits/priority.ts';
import type { EmbedResult, Provider } from '../providers/provider.ts';
import { UpstreamError } from '../protocol/upstream-error.ts';
import { createRequestId } from './request-id.ts';
import { BreakerRegistry } from '../resilience/circuit-breaker.ts';
import { Deadline } from '../resilience/deadline.ts';
import { realSleep, type Sleep } from '../resilience/sleep.ts';
import { UpstreamRouteError } from '../router/attempt-record.ts';
import { DeploymentStats } from '../router/deployment-stats.ts';
import { expandFallbacks } from '../router/expand-fallbacks.ts';
import { buildGatewayCatalog, type CatalogModel, type GatewayCatalog, type GatewayRoutingConfig } from '../router/gateway-catalog.ts';
import { PromptTokenEstimate } from '../router/prompt-token-estimate.ts';
import { resolveRoute, resolveRouteUpstreamModel } from '../router/resolve-route.ts';
import { runAttempts, type RoutingState } from '../router/run-attempts.ts';
import { countTokens } from '../protocol/usage-estimate.ts';
import { shortenEmbedding } from '../wire/openai-embeddings/embedding-codec.ts';
import type { EmbeddingsRequest } from '../protocol/embeddings-request.ts';
import type { CompletionMeta } from '../router/chat-meta.ts';
import { escapeLogText } from '../../core/escape-log-text.ts';

const EMBEDDING: ModelKind = 'embedding';

export interface EmbeddingsGatewayOptions {
  config: GatewayRoutingConfig;
  env: NodeJS.ProcessEnv;
  /** The catalog the chat service already built from the same config; absent: built here. */
  catalog?: GatewayCatalog;
  /** Provider instances by name instead of building them from config (the chat service's, tests). */
  providers?: Readonly<Record<string, Provider>>;
  /** The chat service's breakers and load figures, so /health describes one set; absent: own (tests). */
  breakers?: BreakerRegistry;
  stats?: DeploymentStats;
  admission?: Admission;
  billing?: BillingService;
  keyLimits?: KeyLimiter;
  observer?: GatewayObserver;
  log?: (line: string) => void;
  /** The HTTP status the transport answers a failure with; default estimateErrorStatus. */
  errorStatus?: (error: HerdError) => number;
  clock?: Clock;
  random?: () => number;
  sleep?: Sleep;
}

/** What the transport writes: the vectors in input order, the answering model and the x-herd-* facts. */
export interface EmbeddingsAnswer {
  vectors: Float32Array[];
  meta: CompletionMeta;
}

const NEVER_ABORTED = new LightAbortController().signal;

export class EmbeddingsGateway {
  readonly catalog: GatewayCatalog;
  private readonly state: RoutingState;
  private readonly owned: Provider[];
  private readonly options: EmbeddingsGatewayOptions;

  constructor(options: EmbeddingsGatewayOptions) {
    this.options = options;
    this.catalog = options.catalog ?? buildGatewayCatalog(options.config, options.env);
    const clock = options.clock ?? systemClock;
    // Only the providers an embedding model deploys on; given instances (the chat service's) are shared, not owned.
    const providers = createProviders(onlyEmbeddingProviders(this.catalog), options.env, options.providers);
    this.owned = providers.owned;
    this.state = {
      providers: providers.byName,
      breakers: options.breakers ?? new BreakerRegistry(() => clock.now()),
      stats: options.stats ?? new DeploymentStats(),
      clock,
      random: options.random ?? Math.random,
      sleep: options.sleep ?? realSleep,
      admission: options.admission,
    };
  }

  async handle(request: EmbeddingsRequest, caller: GatewayCaller): Promise<EmbeddingsAnswer> {
    const t0 = performance.now();
    const progress = { model: UNKNOWN_MODEL, calledUpstream: false };
    try {
      return await this.run(request, caller, t0, progress);
    } catch (err) {
      this.reportFailure(err, progress, t0);
      throw err;
    }
  }

  /** A request the transport refused before handle() (no valid key, a body that does not validate). */
  reportRefused(error: HerdError): void {
    this.notify({ model: UNKNOWN_MODEL, provider: NO_PROVIDER, statusClass: mapStatusToClass(this.statusOf(error)), cache: 'off', stream: false });
  }

  async close(): Promise<void> {
    await Promise.all(this.owned.map((p) => p.close()));
  }

  private async run(request: EmbeddingsRequest, caller: GatewayCaller, t0: number, progress: { model: string; calledUpstream: boolean }): Promise<EmbeddingsAnswer> {
    const { billing, keyLimits } = this.options;
    const { clock } = this.state;
    const startedAt = Date.now();
    const requestId = createRequestId(startedAt);
    const allowModel = (model: string) => isModelAllowed(caller.key, model);
    const priority = resolvePriority(caller.headers[PRIORITY_HEADER], caller.key.defaultPriority);
    // The route table takes a chat request's prompt (for `auto`); embeddings never route by size.
    const asChat: ChatRequest = { model: request.model, messages: [] };
    const route = await resolveRoute(this.catalog, request.model, new PromptTokenEstimate(asChat), allowModel, EMBEDDING);
    const model = route.model;
    progress.model = model.name;
    checkDimensions(model, request);

    const hasBudget = caller.key.budgetDayMicros !== undefined || caller.key.budgetMonthMicros !== undefined;
    const reserving = billing !== undefined && hasBudget;
    // Counting tokens costs CPU: only a TPM limit or a budget needs the count before the answer.
    const counted = reserving || caller.key.tpm !== undefined ? await countInputTokens(request.inputs) : undefined;
    const ticket: KeyLimitTicket | undefined = keyLimits ? await keyLimits.reserve(caller.key, counted ?? 0) : undefined;
    const base: FinishBase = {
      requestId,
      key: { id: caller.key.id, name: caller.key.name },
      origin: caller.origin,
      // This flow reads only OpenAI's embeddings body, whatever the caller says it spoke.
      dialect: 'openai-embeddings',
      routeRule: route.rule,
      requestedModel: request.model,
      priority,
      startedAt,
      reserved: reserving,
    };
    try {
      if (billing && reserving) {
        const estimateMicros = billing.estimate({ model: model.name, promptTokens: counted ?? 0, maxCompletionTokens: 0 });
        await billing
          .reserve({ keyId: caller.key.id, requestId, estimateMicros, budgets: { dayMicros: caller.key.budgetDayMicros, monthMicros: caller.key.budgetMonthMicros } })
          .catch((err: unknown) => {
            const error = toHerdError(err);
            void billing.finish({ ...base, outcome: 'error', error, httpStatus: this.statusOf(error), reserved: false, latencyMs: performance.now() - t0 }).catch(() => undefined);
            throw err;
          });
      }
      const signal: AbortLink = caller.signal ?? NEVER_ABORTED;
      const chain = expandFallbacks(this.catalog, model, allowModel);
      const deadline = new Deadline(deadlineMs(this.catalog, model), () => clock.now());
      const startedLoop = clock.now();
      progress.calledUpstream = true;
      let loop: Awaited<ReturnType<typeof runAttempts<EmbedResult>>>;
      try {
        loop = await runAttempts<EmbedResult>(this.state, {
          chain,
          request: asChat,
          stream: false,
          signal,
          deadline,
          priority,
          upstreamModelOf: (deployment) => resolveRouteUpstreamModel(route, deployment),
          forecastTokens: async () => ({ prompt: counted ?? (await countInputTokens(request.inputs)), completion: 0 }),
          attempt: async (target, attemptSignal) => {
            const embed = target.provider.embed?.bind(target.provider);
            if (embed === undefined) {
              throw new UpstreamError(`${target.provider.name}: this provider has no embeddings API`, { provider: target.provider.name, failure: 'not_found' });
            }
            const result = await embed(
              {
                inputs: request.inputs,
                upstreamModel: target.upstreamModel,
                ...(request.dimensions !== undefined ? { dimensions: request.dimensions } : {}),
                timeoutMs: target.timeouts.timeoutMs,
              },
              attemptSignal,
            );
            if (result.vectors.length !== request.inputs.length) {
              throw new UpstreamError(`${target.provider.name}: upstream returned ${result.vectors.length} embeddings for ${request.inputs.length} inputs`, {
                provider: target.provider.name,
                failure: 'malformed',
              });
            }
            return result;
          },
        });
      } catch (err) {
        this.finishError(base, err, t0);
        throw err;
      }
      loop.lease.succeed();
      const result = loop.value;
      const vectors = request.dimensions === undefined ? result.vectors : result.vectors.map((v) => shortenEmbedding(v, request.dimensions!));
      const usage = embeddingUsage(result.usage.promptTokens, result.usage.estimated === true);
      const latencyMs = performance.now() - t0;
      const meta: CompletionMeta = {
        usage,
        rawFinishReason: null,
        requestedModel: request.model,
        route: route.kind,
        routeRule: route.rule,
        model: loop.target.model.name,
        provider: loop.target.deployment.provider.name,
        upstreamModel: loop.target.upstreamModel,
        attempts: loop.attempts,
        upstreamMs: loop.upstreamMs,
        waitedMs: loop.waitedMs,
        queuedMs: loop.queuedMs,
        overheadMs: Math.max(0, clock.now() - startedLoop - loop.upstreamMs - loop.waitedMs),
        warnings: [],
      };
      // The answer waits for its rows' commit, never for the settlement or the metrics.
      const finishing = billing?.finishDurably({ outcome: 'completion', meta, latencyMs, httpStatus: 200, ...base });
      setImmediate(() => {
        void ticket?.settle(usage.promptTokens);
        const billed = finishing?.done;
        void billed?.catch((err: unknown) => this.options.log?.(`ledger: ${escapeLogText(String(err))}`));
        this.reportAnswer(
          {
            model: meta.model,
            provider: meta.provider,
            statusClass: '2xx',
            cache: 'off',
            stream: false,
            tokens: usage,
            upstreamMs: meta.upstreamMs,
            queuedMs: meta.queuedMs,
            overheadMs: Math.max(0, latencyMs - meta.upstreamMs - meta.waitedMs),
          },
          billed,
        );
      });
      await finishing?.committed.catch(() => undefined);
      return { vectors, meta };
    } catch (err) {
      void ticket?.settle(0);
      throw err;
    }
  }

  private reportAnswer(event: GatewayRequestEvent, billed: Promise<FinishResult> | undefined): void {
    if (this.options.observer === undefined) return;
    if (billed === undefined) {
      this.notify(event);
      return;
    }
    billed.then(
      (r) => {
        if (r.cost !== undefined) event.usdMicros = r.cost.usdMicros;
        this.notify(event);
      },
      () => this.notify(event),
    );
  }

  private reportFailure(err: unknown, progress: { model: string; calledUpstream: boolean }, t0: number): void {
    if (this.options.observer === undefined) return;
    const error = toHerdError(err);
    const last = error instanceof UpstreamRouteError ? error.attempts.at(-1) : undefined;
    const event: GatewayRequestEvent = {
      model: last?.model ?? progress.model,
      provider: last?.provider ?? NO_PROVIDER,
      statusClass: mapStatusToClass(this.statusOf(error)),
      cache: 'off',
      stream: false,
    };
    if (!progress.calledUpstream) event.overheadMs = performance.now() - t0;
    this.notify(event);
  }

  private notify(event: GatewayRequestEvent): void {
    try {
      this.options.observer?.onRequestFinished(event);
    } catch (err) {
      this.options.log?.(`gateway observer: ${escapeLogText(String(err))}`);
    }
  }

  private finishError(base: FinishBase, err: unknown, t0: number): void {
    const error = toHerdError(err);
    void this.options.billing
      ?.finish({ outcome: 'error', error, httpStatus: this.statusOf(error), latencyMs: performance.now() - t0, ...base })
      .catch((e: unknown) => this.options.log?.(`ledger: ${escapeLogText(String(e))}`));
  }

  private statusOf(error: HerdError): number {
    return (this.options.errorStatus ?? estimateErrorStatus)(error);
  }
}

function checkDimensions(model: CatalogModel, request: EmbeddingsRequest): void {
  if (request.dimensions === undefined) return;
  if (model.dimensions === undefined) {
    throw new HerdError('UNSUPPORTED', `The model \`${model.name}\` does not support 'dimensions' (its vectors have a fixed length).`, { param: 'dimensions' });
  }
  if (request.dimensions > model.dimensions) {
    throw new HerdError('INVALID_ARG', `'dimensions' is ${request.dimensions}; the model \`${model.name}\` returns at most ${model.dimensions}.`, { param: 'dimensions' });
  }
}

async function countInputTokens(inputs: readonly string[]): Promise<number> {
  let total = 0;
  for (const text of inputs) total += await countTokens(text);
  return total;
}

/** Embeddings bill input only: every token is a prompt token. */
function embeddingUsage(promptTokens: number, estimated: boolean): Usage {
  return { promptTokens, cachedPromptTokens: 0, cacheWriteTokens: 0, completionTokens: 0, reasoningTokens: 0, estimated, raw: undefined };
}

/** routes.deadline_ms, but never shorter than one attempt on the model's slowest deployment. */
function deadlineMs(catalog: GatewayCatalog, model: CatalogModel): number {
  let longest = 0;
  for (const d of model.enabledDeployments) longest = Math.max(longest, d.provider.settings.timeout_ms);
  return Math.max(catalog.deadlineMs, longest);
}

/** The catalog with only the providers some embedding model deploys on (createProviders builds one pool per provider). */
function onlyEmbeddingProviders(catalog: GatewayCatalog): GatewayCatalog {
  const names = new Set<string>();
  for (const model of catalog.models.values()) {
    if (model.kind === EMBEDDING) for (const d of model.deployments) names.add(d.provider.name);
  }
  return { ...catalog, providers: new Map([...catalog.providers].filter(([name]) => names.has(name))) };
}
