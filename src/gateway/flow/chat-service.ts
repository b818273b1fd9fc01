// The routed attempts behind the gateway flow (chat-gateway.ts, the one entry point): for a route the flow
// resolved, runs the attempts (strategy, retries, breakers, fallbacks, deadlines) and returns the answer
// or the opened stream plus what headers and the ledger need (model, provider, attempts, upstream time).
import { type AbortLink, LightAbortController } from '../../core/abort-link.ts';
import type { ModelKind } from '../../config/gateway-config-schema.ts';
import type { Priority } from '../limits/priority.ts';
import type { AttemptRecord } from '../router/attempt-record.ts';
import { computeAttemptTimeouts, Deadline } from '../resilience/deadline.ts';
import { expandFallbacks } from '../router/expand-fallbacks.ts';
import { PromptTokenEstimate } from '../router/prompt-token-estimate.ts';
import type { InferencePort } from '../../core/inference-port.ts';
import { systemClock, type Clock } from '../../core/clock.ts';
import type { ChatRequest, ChatResponse } from '../protocol/chat-types.ts';
import type { EmbeddingsRequest } from '../protocol/embeddings-request.ts';
import { attemptEmbeddings, embeddingUsage, shortenEmbeddings } from './attempt-embeddings.ts';
import { createProviders } from './create-providers.ts';
import { describeGatewayHealth, listGatewayModels, listPatternProviders, type GatewayHealth } from './describe-gateway.ts';
import type { Admission } from '../limits/admission.ts';
import type { EmbedResult, PassThrough, Provider, ProviderResult, ProviderWarning } from '../providers/provider.ts';
import { BreakerRegistry } from '../resilience/circuit-breaker.ts';
import { realSleep, type Sleep } from '../resilience/sleep.ts';
import type { ChatMeta, CompletionMeta } from '../router/chat-meta.ts';
import { MemoryAffinityStore, type AffinityStore, type SessionIdentity } from '../router/cache-affinity.ts';
import { DeploymentStats } from '../router/deployment-stats.ts';
import { buildGatewayCatalog, type CatalogModel, type GatewayCatalog, type GatewayRoutingConfig } from '../router/gateway-catalog.ts';
import { resolveRoute, resolveRouteUpstreamModel, type ModelFilter, type ResolvedRoute } from '../router/resolve-route.ts';
import { resolveSessionIdentity, type SessionSources } from '../router/resolve-session-identity.ts';
import { runAttempts, type AttemptLoopResult, type AttemptTarget, type RoutingState } from '../router/run-attempts.ts';
import { UpstreamModelLists, type UpstreamModelListsOptions } from '../router/upstream-model-lists.ts';
import { renameModel } from '../protocol/upstream-bytes.ts';
import { createStreamRelay, openProviderStream, type OpenedStream } from './stream-relay.ts';
import { AttemptSpans, type AttemptMeter, type AttemptTracing } from './attempt-spans.ts';
import { NO_TRACE_PARENT, type TraceParent } from '../../tracing/trace-parent.ts';
import { NOOP_TRACER } from '../../tracing/noop-tracer.ts';
import type { ModelListEntry } from '../protocol/model-list-entry.ts';
import type { StreamRelay, StreamResult } from '../protocol/stream-relay-types.ts';

export interface ChatServiceOptions {
  /** Validated config (a HerdConfig will do): providers, models, routes. */
  config: GatewayRoutingConfig;
  /** Where providers' keys are read (and whether each provider is enabled). */
  env: NodeJS.ProcessEnv;
  clock?: Clock;
  /** Provider instances by provider name, used instead of building them from config (tests). */
  providers?: Readonly<Record<string, Provider>>;
  /** Uniform in [0, 1): jitter and weighted choice. */
  random?: () => number;
  /** The wait between retries. */
  sleep?: Sleep;
  /** Waits for a slot on the upstream model and provider before each attempt (see createGatewayLimits). */
  admission?: Admission;
  /** This Herd's models, for `type: triton` providers without base_url; absent: such deployments are unavailable. */
  inference?: InferencePort;
  /** Where prompt-cache affinity keeps its choices (createAffinityStore); absent: this process's memory, when routes.affinity is on. */
  affinity?: AffinityStore;
  /** How upstreams' own model lists are cached for GET /v1/models (tests shorten them). */
  modelLists?: Omit<UpstreamModelListsOptions, 'clock'>;
  /** Told about every finished attempt (the gen_ai.client.* metrics); absent: none. */
  meter?: AttemptMeter;
}

export interface ChatContext {
  /** Aborted when the client goes away: stops the upstream call and any retry. */
  signal?: AbortLink;
  /** Whether the caller's key may use a model (canonical names); absent: every model. */
  allowModel?: ModelFilter;
  /** Total time for this request, replacing routes.deadline_ms. */
  deadlineMs?: number;
  /** Admission class (resolvePriority: x-herd-priority, else the key's default); NORMAL when absent. */
  priority?: Priority;
  /** The caller's estimate of this request's prompt, so a prompt already tokenized is not tokenized again. */
  prompt?: PromptTokenEstimate;
  /** The route the flow already resolved (access checked): used as is. Absent: resolved here (direct callers, tests). */
  route?: ResolvedRoute;
  /** Just before each upstream call (the ledger's attempt intent); synchronous. */
  onAttemptStart?: (attempt: number, record: AttemptRecord) => void;
  /** The client takes a same-dialect upstream's own bytes (JSON, or RawSse pieces for streams). */
  passThrough?: PassThrough;
  /** The request's session for prompt-cache affinity (resolveSession); absent: the strategy alone picks. */
  session?: SessionIdentity;
  /** Tracing on: each attempt gets a CLIENT span under this parent. Absent: no spans, no traceparent upstream. */
  trace?: AttemptTracing;
}

export interface ChatCompletion {
  response: ChatResponse;
  meta: CompletionMeta;
}

/** An embeddings answer: one vector per input, in order (shortened to `dimensions` when asked). */
export interface EmbeddingsCompletion {
  vectors: Float32Array[];
  meta: CompletionMeta;
}

/** A stream whose first chunk is ready: send headers from `meta`, then forward `chunks`. */
export interface ChatStream extends StreamRelay {
  meta: ChatMeta;
}

export interface ChatService {
  /** Rejects with HerdError: NOT_FOUND, PERMISSION_DENIED, UNAVAILABLE, or UpstreamRouteError; or the signal's reason when aborted. */
  complete(request: ChatRequest, context?: ChatContext): Promise<ChatCompletion>;
  /** Resolves at the first chunk; rejects (as complete() does) when no upstream got that far. */
  stream(request: ChatRequest, context?: ChatContext): Promise<ChatStream>;
  /**
   * The same attempts for an embeddings request; `routing` is how the router sees it (embeddingsRoutingRequest:
   * its model, no completion). Rejects as complete() does.
   */
  embed(request: EmbeddingsRequest, routing: ChatRequest, context?: ChatContext): Promise<EmbeddingsCompletion>;
  /**
   * The request's session identity, when prompt-cache affinity is on and the route can choose between
   * deployments; the flow computes it once and passes it in ChatContext.session.
   */
  resolveSession?(request: ChatRequest, sources: SessionSources, route: ResolvedRoute): SessionIdentity | undefined;
  /** Configured names, and what pattern routes' upstreams list (cached; waits briefly at most). */
  listModels(allowed?: ModelFilter): Promise<ModelListEntry[]>;
  health(): GatewayHealth;
  readonly catalog: GatewayCatalog;
  /** The provider instances by name (their pools), for the other flows over the same catalog (embeddings). */
  readonly providers: Readonly<Record<string, Provider>>;
  /** The breakers and load figures health() describes, likewise shared: one set per deployment key for every flow. */
  readonly breakers: BreakerRegistry;
  readonly stats: DeploymentStats;
  close(): Promise<void>;
}

export function createChatService(options: ChatServiceOptions): ChatService {
  const clock = options.clock ?? systemClock;
  const catalog = buildGatewayCatalog(options.config, options.env);
  const providers = createProviders(catalog, options.env, options.providers, options.inference);
  const now = () => clock.now();
  const affinitySettings = options.config.routes.affinity;
  const affinity = affinitySettings.enabled ? (options.affinity ?? new MemoryAffinityStore(clock)) : undefined;
  const sessionSettings = { prefixChars: affinitySettings.prefix_kb * 1024, ttlMs: affinitySettings.ttl_s * 1000 };
  const state: RoutingState = {
    providers: providers.byName,
    breakers: new BreakerRegistry(now),
    stats: new DeploymentStats(),
    clock,
    random: options.random ?? Math.random,
    sleep: options.sleep ?? realSleep,
    admission: options.admission,
    affinity,
  };
  const created = Math.floor(Date.now() / 1000);
  const modelLists = new UpstreamModelLists({ clock, ...options.modelLists });

  const routing = { catalog, state, meter: options.meter };

  return {
    catalog,
    providers: Object.fromEntries(providers.byName),
    breakers: state.breakers,
    stats: state.stats,

    async complete(request, context = {}) {
      const { loop, meta, spans } = await routeAttempts<ProviderResult>(routing, {
        request,
        context,
        stream: false,
        attempt: (target, signal, traceParent) =>
          target.provider.chat(
            { request, upstreamModel: target.upstreamModel, timeoutMs: target.timeouts.timeoutMs, passThrough: context.passThrough, strict: target.model.strict, traceParent },
            signal,
          ),
      });
      loop.lease.succeed();
      const result = loop.value;
      spans?.finish({ response: result.response, usage: result.usage });
      renameModel(result.response, loop.target.model.name);
      // New fields before the spread, never after it: on Node 20, `{ ...a, b }` allocates more and lands in
      // the old generation (docs/decisions/hot-path-allocation-shapes.md). Hot-path merges in the gateway follow this order.
      return { response: result.response, meta: { usage: result.usage, rawFinishReason: result.rawFinishReason, ...meta(result.warnings) } };
    },

    async stream(request, context = {}) {
      const { loop, meta, signal, spans } = await routeAttempts<OpenedStream>(routing, {
        request,
        context,
        stream: true,
        attempt: (target, attemptSignal, traceParent) => {
          const { timeoutMs, idleTimeoutMs } = target.timeouts;
          const call = { request, upstreamModel: target.upstreamModel, timeoutMs, idleTimeoutMs, passThrough: context.passThrough, strict: target.model.strict, traceParent };
          return openProviderStream(target.provider.stream(call, attemptSignal));
        },
      });
      const relay = createStreamRelay({
        opened: loop.value,
        lease: loop.lease,
        request,
        model: loop.target.model.name,
        signal,
        attempts: loop.attempts,
        clock,
      });
      if (spans !== undefined) finishStreamSpan(spans, loop.value, relay.result);
      return { meta: meta(loop.value.warnings), ...relay };
    },

    async embed(request, asRouted, context = {}) {
      const attempt = (target: AttemptTarget, signal: AbortLink, traceParent: TraceParent | undefined) => attemptEmbeddings(target, request, signal, traceParent);
      const { loop, meta, spans } = await routeAttempts<EmbedResult>(routing, { request: asRouted, context, stream: false, attempt, kind: 'embedding', texts: request.inputs });
      loop.lease.succeed();
      spans?.finish({ usage: embeddingUsage(loop.value.usage) });
      return { vectors: shortenEmbeddings(loop.value, request), meta: { usage: embeddingUsage(loop.value.usage), rawFinishReason: null, ...meta([]) } };
    },

    resolveSession: (request, sources, resolved) => (affinity === undefined ? undefined : resolveAffineSession(request, sources, resolved, sessionSettings)),
    async listModels(allowed) {
      const upstreamIds = new Map<string, readonly string[]>();
      await Promise.all(
        listPatternProviders(catalog).map(async (name) => {
          const provider = providers.byName.get(name);
          if (provider !== undefined) upstreamIds.set(name, await modelLists.get(provider));
        }),
      );
      return listGatewayModels(catalog, created, allowed, upstreamIds);
    },
    health: () => describeGatewayHealth(catalog, state.breakers, state.stats),
    async close() {
      await Promise.all(providers.owned.map((p) => p.close()));
    },
  };
}

const NEVER_ABORTED = new LightAbortController().signal;

export interface RouteAttemptsInput<T> {
  request: ChatRequest;
  context: ChatContext;
  stream: boolean;
  /** `traceParent`: the attempt span's context, for the upstream request (undefined: tracing off). */
  attempt: (target: AttemptTarget, signal: AbortLink, traceParent: TraceParent | undefined) => Promise<T>;
  /** The model kind a route resolved here must have; default chat. */
  kind?: ModelKind | undefined;
  /** An embeddings request's inputs: the prompt counted instead of the request's messages. */
  texts?: readonly string[] | undefined;
}

export interface RoutedAttempts<T> {
  loop: AttemptLoopResult<T>;
  /** The answer's meta, with the provider's warnings; overhead measured when called. */
  meta: (warnings: ProviderWarning[]) => ChatMeta;
  signal: AbortLink;
  /** The attempts' spans (tracing on): the caller ends the answering one with what the answer says. */
  spans: AttemptSpans | undefined;
}

export async function routeAttempts<T>(
  service: { catalog: GatewayCatalog; state: RoutingState; meter?: AttemptMeter | undefined },
  input: RouteAttemptsInput<T>,
): Promise<RoutedAttempts<T>> {
  const { catalog, state } = service;
  const { request, context, stream } = input;
  const { clock } = state;
  const startedAt = clock.now();
  const signal = context.signal ?? NEVER_ABORTED;
  if (signal.aborted) throw signal.reason;
  const prompt = context.prompt ?? new PromptTokenEstimate(input.texts ?? request);
  const resolved = context.route ?? (await resolveRoute(catalog, request.model, prompt, context.allowModel, input.kind));
  const chain = expandFallbacks(catalog, resolved.model, context.allowModel);
  const spans = tracedAttempts(service, input);
  const deadline = new Deadline(context.deadlineMs ?? defaultDeadlineMs(catalog, resolved.model, request, stream), () => clock.now());
  const loop = await runAttempts(state, {
    chain,
    request,
    stream,
    signal,
    deadline,
    attempt:
      spans === undefined
        ? (target, attemptSignal) => input.attempt(target, attemptSignal, undefined)
        : (target, attemptSignal) => spans.run(target, (parent) => input.attempt(target, attemptSignal, parent)),
    priority: context.priority,
    session: context.session,
    onAttemptStart: context.onAttemptStart,
    upstreamModelOf: (deployment) => resolveRouteUpstreamModel(resolved, deployment),
    forecastTokens: async () => {
      const promptTokens = await prompt.exact();
      return { prompt: promptTokens, completion: request.max_completion_tokens ?? request.max_tokens ?? promptTokens };
    },
  });
  const meta = (warnings: ProviderWarning[]): ChatMeta => {
    const m: ChatMeta = {
      requestedModel: request.model,
      route: resolved.kind,
      routeRule: resolved.rule,
      model: loop.target.model.name,
      provider: loop.target.deployment.provider.name,
      upstreamModel: loop.target.upstreamModel,
      attempts: loop.attempts,
      upstreamMs: loop.upstreamMs,
      waitedMs: loop.waitedMs,
      queuedMs: loop.queuedMs,
      overheadMs: Math.max(0, clock.now() - startedAt - loop.upstreamMs - loop.waitedMs),
      warnings,
    };
    if (resolved.tier !== undefined) m.tier = resolved.tier;
    const counted = prompt.known();
    if (counted !== undefined) m.estimatedPromptTokens = counted;
    return m;
  };
  return { loop, meta, signal, spans };
}

/** Spans for the attempts when the flow traces this request; metrics alone still need the attempts measured. */
function tracedAttempts<T>(service: { state: RoutingState; meter?: AttemptMeter | undefined }, input: RouteAttemptsInput<T>): AttemptSpans | undefined {
  const trace = input.context.trace;
  if (trace === undefined && service.meter === undefined) return undefined;
  const operation = input.kind === 'embedding' ? 'embeddings' : 'chat';
  return new AttemptSpans(trace ?? NO_TRACING, operation, input.request, input.stream, service.state.breakers, service.meter);
}

const NO_TRACING: AttemptTracing = { tracer: NOOP_TRACER, parent: NO_TRACE_PARENT, captureContent: false };

/** The request's session when its route has deployments to choose between (else nothing to read the request for). */
function resolveAffineSession(
  request: ChatRequest,
  sources: SessionSources,
  resolved: ResolvedRoute,
  settings: { prefixChars: number; ttlMs: number },
): SessionIdentity | undefined {
  const model = resolved.model;
  if (model.enabledDeployments.length < 2 && model.fallbacks.length === 0) return undefined;
  return resolveSessionIdentity(request, sources, settings);
}

/** The answering attempt's span ends with its stream; the response id is the first chunk's (OpenAI's chatcmpl-…). */
function finishStreamSpan(spans: AttemptSpans, opened: OpenedStream, result: Promise<StreamResult>): void {
  let responseId: string | undefined;
  for (const event of opened.head) if (event.type === 'chunk' && responseId === undefined) responseId = event.chunk.id;
  void result.then((r) => spans.finish({ responseId, usage: r.usage, finishReasons: r.finishReason === null ? [] : [r.finishReason], error: r.error }));
}

/** routes.deadline_ms, but never shorter than one attempt on the primary model: it bounds retries, not a single long answer. */
function defaultDeadlineMs(catalog: GatewayCatalog, model: CatalogModel, request: ChatRequest, stream: boolean): number {
  let longest = 0;
  for (const d of model.enabledDeployments) {
    const t = computeAttemptTimeouts({ request, stream, provider: d.provider.settings, model: { ms_per_token: model.msPerToken } });
    longest = Math.max(longest, t.timeoutMs);
  }
  return Math.max(catalog.deadlineMs, longest);
}
