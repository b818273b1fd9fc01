// The chat service's one way into the attempt loop, for chat, streams and embeddings alike: the route (the
// flow's, or resolved here for direct callers), its fallback chain and deadline, runAttempts, and the meta
// (model, provider, attempts, upstream time) every answer carries.
import { type AbortLink, LightAbortController } from '../../core/abort-link.ts';
import type { ModelKind } from '../../config/gateway-config-schema.ts';
import type { ChatRequest } from '../protocol/chat-types.ts';
import type { ProviderWarning } from '../providers/provider.ts';
import { computeAttemptTimeouts, Deadline } from '../resilience/deadline.ts';
import type { ChatMeta } from '../router/chat-meta.ts';
import { expandFallbacks } from '../router/expand-fallbacks.ts';
import type { CatalogModel, GatewayCatalog } from '../router/gateway-catalog.ts';
import { PromptTokenEstimate } from '../router/prompt-token-estimate.ts';
import { resolveRoute, resolveRouteUpstreamModel } from '../router/resolve-route.ts';
import { runAttempts, type AttemptLoopResult, type AttemptTarget, type RoutingState } from '../router/run-attempts.ts';
import type { Priority } from '../limits/priority.ts';
import type { PassThrough } from '../providers/provider.ts';
import type { AttemptRecord } from '../router/attempt-record.ts';
import type { SessionIdentity } from '../router/cache-affinity.ts';
import type { ModelFilter, ResolvedRoute } from '../router/resolve-route.ts';

const NEVER_ABORTED = new LightAbortController().signal;

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
}

export interface RouteAttemptsInput<T> {
  request: ChatRequest;
  context: ChatContext;
  stream: boolean;
  attempt: (target: AttemptTarget, signal: AbortLink) => Promise<T>;
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
}

export async function routeAttempts<T>(service: { catalog: GatewayCatalog; state: RoutingState }, input: RouteAttemptsInput<T>): Promise<RoutedAttempts<T>> {
  const { catalog, state } = service;
  const { request, context, stream } = input;
  const { clock } = state;
  const startedAt = clock.now();
  const signal = context.signal ?? NEVER_ABORTED;
  if (signal.aborted) throw signal.reason;
  const prompt = context.prompt ?? new PromptTokenEstimate(input.texts ?? request);
  const resolved = context.route ?? (await resolveRoute(catalog, request.model, prompt, context.allowModel, input.kind));
  const chain = expandFallbacks(catalog, resolved.model, context.allowModel);
  const deadline = new Deadline(context.deadlineMs ?? defaultDeadlineMs(catalog, resolved.model, request, stream), () => clock.now());
  const loop = await runAttempts(state, {
    chain,
    request,
    stream,
    signal,
    deadline,
    attempt: input.attempt,
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
  return { loop, meta, signal };
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
