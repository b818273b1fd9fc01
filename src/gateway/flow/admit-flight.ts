// Admission, the flow's first step for every operation (chat in any dialect, embeddings): the route
// resolved once (access checked), the caller's priority, the key's rate-limit ticket, the cache decision,
// and then the budget reservation — everything later steps read from the Flight.
import type { ModelKind } from '../../config/gateway-config-schema.ts';
import { BudgetExceededError, remainingBudget } from '../billing/check-budgets.ts';
import { hasBudgets, planBudgets } from '../billing/plan-budgets.ts';
import { evaluateCachePolicy } from '../cache/cache-policy.ts';
import { isModelAllowed } from '../keys/is-model-allowed.ts';
import { estimateTokenReservation } from '../limits/key-limiter.ts';
import { PRIORITY_HEADER, resolvePriority } from '../limits/priority.ts';
import type { ChatRequest } from '../protocol/chat-types.ts';
import type { AttemptRecord } from '../router/attempt-record.ts';
import { PromptTokenEstimate } from '../router/prompt-token-estimate.ts';
import { resolveRoute, resolveRouteUpstreamModel, type ResolvedRoute } from '../router/resolve-route.ts';
import { computeFlightCacheKey } from './flight-cache.ts';
import type { ChatGatewayDeps, Flight, GatewayCaller, Progress } from './flight.ts';
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
  const reserving = deps.billing !== undefined && hasBudgets(caller.key) && caller.batch === undefined;
  const promptTokens = reserving || caller.key.tpm !== undefined ? await prompt.exact() : 0;
  const ticket = deps.keyLimits ? await deps.keyLimits.reserve(caller.key, estimateTokenReservation(promptTokens, request)) : undefined;
  // Only chat answers are cached: an embeddings operation has no policy.
  const policy = deps.cache && operation === undefined ? evaluateCachePolicy(request, caller.headers, deps.cache.policy) : undefined;
  const requestId = caller.requestId ?? createRequestId(startedAt);
  const billing = deps.billing;
  const dialect = caller.dialect ?? 'openai-chat';
  // The intent goes out before the call, so a process killed mid-call still leaves an attempt row. Not for a batch
  // line: it is run again under the same request id when its lease runs out, and an `interrupted` row recovered
  // first (the killed replica restarting sooner) would shadow the row of the run that answered.
  const onAttemptStart =
    billing && caller.batch === undefined
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
      key: caller.key,
      origin: caller.origin,
      dialect,
      routeRule: route.rule,
      requestedModel: request.model,
      priority,
      startedAt,
      reserved: reserving,
      batch: caller.batch === undefined ? undefined : { id: caller.batch.id, upstreamBatch: false },
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

/**
 * The budget reservation for a key (or team) with a budget, on every line planBudgets gives: the dearest
 * deployment's price for the prompt plus the most the answer may be (max_tokens, else the model's maximum
 * output), so an answer can never cost more than was held. When that does not fit and the key allows it,
 * a request without max_tokens is capped to what the budget covers (Flight.maxTokensCapped). A refusal
 * writes no ledger row (refusals are in the audit log).
 */
export async function reserveFlightBudget(deps: ChatGatewayDeps, flight: Flight): Promise<void> {
  const { billing } = deps;
  const { caller, request, base } = flight;
  if (billing === undefined || !base.reserved) return;
  const atMs = Date.now();
  const lines = planBudgets(caller.key, atMs, flight.route.model.name, { defaultThresholds: billing.defaultThresholds });
  if (lines.length === 0) {
    // Only per-model rules for other models: nothing to hold, the settlement alone records the cost.
    base.reserved = false;
    return;
  }
  const sent = request.max_completion_tokens ?? request.max_tokens;
  const estimate = (completionTokens: number) =>
    billing.estimateForModel({
      model: flight.route.model,
      upstreamModelOf: (deployment) => resolveRouteUpstreamModel(flight.route, deployment),
      promptTokens: flight.promptTokens,
      maxCompletionTokens: completionTokens,
      atMs,
    });
  const reserve = (estimateMicros: number) => billing.reserve({ keyId: caller.key.id, requestId: base.requestId, estimateMicros, lines, atMs });
  // An embedding has no output to bound; a chat answer is bounded by max_tokens, else the model's maximum.
  const ceiling = flight.route.model.kind === 'embedding' ? 0 : (sent ?? billing.maxOutputTokens(flight.route.model.name));
  try {
    await reserve(estimate(ceiling));
    base.lines = lines;
    return;
  } catch (err) {
    if (!(err instanceof BudgetExceededError) || sent !== undefined || !caller.key.capMaxTokens) throw err;
    const left = remainingBudget(lines, await billing.ledger.budgetSpend(lines));
    const tokens = largestFitting(ceiling, (n) => estimate(n) <= left);
    if (tokens < 1) throw err;
    await reserve(estimate(tokens));
    base.lines = lines;
    capMaxTokens(flight, tokens);
  }
}

/** The largest n in [0, ceiling] with fits(n) (fits is monotonic: a longer answer never costs less); 0 when none but 0 fits. */
function largestFitting(ceiling: number, fits: (n: number) => boolean): number {
  let lo = 0,
    hi = ceiling;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The upstream gets the cap: the canonical request, and a same-dialect body sent as the client wrote it. */
function capMaxTokens(flight: Flight, tokens: number): void {
  flight.request.max_tokens = tokens;
  flight.maxTokensCapped = tokens;
  const passThrough = flight.context.passThrough;
  if (passThrough?.body === undefined) return;
  const field = passThrough.dialect === 'openai-responses' ? 'max_output_tokens' : 'max_tokens';
  flight.context.passThrough = { ...passThrough, body: { ...passThrough.body, [field]: tokens } };
}
