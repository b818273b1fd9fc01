// Admission, the flow's first step for every operation (chat in any dialect, embeddings): the route
// resolved once (access checked), the caller's priority, the key's rate-limit ticket, the cache decision,
// and then the budget reservation — everything later steps read from the Flight.
import { toHerdError } from '../../core/errors.ts';
import type { ModelKind } from '../../config/gateway-config-schema.ts';
import { evaluateCachePolicy } from '../cache/cache-policy.ts';
import { isModelAllowed } from '../keys/is-model-allowed.ts';
import { estimateTokenReservation } from '../limits/key-limiter.ts';
import { PRIORITY_HEADER, resolvePriority } from '../limits/priority.ts';
import type { ChatRequest } from '../protocol/chat-types.ts';
import type { AttemptRecord } from '../router/attempt-record.ts';
import { PromptTokenEstimate } from '../router/prompt-token-estimate.ts';
import { resolveRoute, resolveRouteUpstreamModel, type ResolvedRoute } from '../router/resolve-route.ts';
import { computeFlightCacheKey } from './flight-cache.ts';
import type { ChatGatewayDeps, Ending, Flight, GatewayCaller, Progress, Settled } from './flight.ts';
import { createRequestId } from './request-id.ts';

/** What differs between operations at admission; absent: a chat request. */
export interface AdmitOperation {
  /** The model kind the route must resolve to. */
  kind: ModelKind;
  /** The prompt the router, TPM and the budget count (an embeddings request: its inputs). */
  prompt: PromptTokenEstimate;
  /** Checks the request against the resolved model before any limit is spent (embeddings' `dimensions`). */
  check?: (route: ResolvedRoute) => void;
}

export async function admitFlight(deps: ChatGatewayDeps, request: ChatRequest, caller: GatewayCaller, t0: number, progress: Progress, operation?: AdmitOperation): Promise<Flight> {
  const startedAt = Date.now();
  const allowModel = (model: string) => isModelAllowed(caller.key, model);
  const priority = resolvePriority(caller.headers[PRIORITY_HEADER], caller.key.defaultPriority);
  const prompt = operation?.prompt ?? new PromptTokenEstimate(request);
  const route = await resolveRoute(deps.chat.catalog, request.model, prompt, allowModel, operation?.kind);
  progress.model = route.model.name;
  operation?.check?.(route);
  // Tokenizing the prompt and holding a reservation cost CPU and a synchronous ledger write on the hot
  // path, so they happen only where a decision needs them: a key with a budget or a TPM limit.
  // Without a budget the settlement alone charges the exact cost (finish with reserved: false).
  const reserving = deps.billing !== undefined && (caller.key.budgetDayMicros !== undefined || caller.key.budgetMonthMicros !== undefined);
  const promptTokens = reserving || caller.key.tpm !== undefined ? await prompt.exact() : 0;
  const ticket = deps.keyLimits ? await deps.keyLimits.reserve(caller.key, estimateTokenReservation(promptTokens, request)) : undefined;
  // Only chat answers are cached: an embeddings operation has no policy.
  const policy = deps.cache && operation === undefined ? evaluateCachePolicy(request, caller.headers, deps.cache.policy) : undefined;
  const requestId = createRequestId(startedAt);
  const billing = deps.billing;
  const dialect = caller.dialect ?? 'openai-chat';
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
      dialect,
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
      passThrough: caller.passThrough === true ? { dialect, body: caller.body } : undefined,
      session: operation === undefined ? deps.chat.resolveSession?.(request, { headers: caller.headers, dialect, body: caller.body }, route) : undefined,
    },
    policy,
    cacheKey: policy?.read || policy?.write ? computeFlightCacheKey(request, route, caller, deps.cache?.policy.scope) : undefined,
    promptTokens,
  };
}

/** The budget reservation for a key with a budget: the dearest deployment's price for the prompt and the completion limit. */
export async function reserveFlightBudget(deps: ChatGatewayDeps, flight: Flight, settle: (flight: Flight, ending: Ending) => Settled): Promise<void> {
  const { billing } = deps;
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
    void settle(flight, { outcome: 'error', error: toHerdError(err), reserved: false });
    throw err;
  }
}
