// One batch request's body checked as its realtime endpoint checks it, and the most it may cost: decoded by the
// endpoint's ingress decoder (passed in: batch/ does not import ingress/), routed with the key's model list as
// admission routes it, priced as the realtime budget reservation is (dearest deployment, prompt + largest answer).
import type { BillingService } from '../billing/billing-service.ts';
import type { Micros } from '../billing/money.ts';
import { hasBudgets } from '../billing/plan-budgets.ts';
import { checkEmbeddingDimensions, embeddingsRoutingRequest } from '../flow/embeddings-routing.ts';
import type { KeyInfo } from '../keys/key-store.ts';
import type { ChatRequest } from '../protocol/chat-types.ts';
import type { EmbeddingsRequest } from '../protocol/embeddings-request.ts';
import type { GatewayCatalog } from '../router/gateway-catalog.ts';
import { PromptTokenEstimate } from '../router/prompt-token-estimate.ts';
import { resolveRoute, resolveRouteUpstreamModel } from '../router/resolve-route.ts';

/** A body as its endpoint's decoder gives it: the chat dialects' canonical request, or an embeddings request. */
export type DecodedLineBody = { kind: 'chat'; request: ChatRequest } | { kind: 'embeddings'; request: EmbeddingsRequest };

/** What submission keeps of a line that passed. */
export interface LinePlan {
  /** The catalog model its route resolved to (an alias, tier or pattern resolved). */
  model: string;
  /** The most the line may cost, in the settlement currency's micro-units. */
  maxCostMicros: Micros;
}

/** Checks one body for `key`; throws the HerdError the realtime endpoint would answer. */
export type CheckLineBody = (body: unknown, key: KeyInfo) => Promise<LinePlan>;

export interface BatchLineCheckDeps {
  catalog: GatewayCatalog;
  /** The endpoint's ingress decoder (chat, Responses, completions, Messages codecs' decode; embeddings' validator). */
  decode: (body: unknown) => DecodedLineBody;
  /** The key's (and its team's) model list: isModelAllowed. */
  allowModel: (key: KeyInfo, model: string) => boolean;
  /** Prices (BillingService fits); undefined: no billing, every line costs 0. */
  pricing: Pick<BillingService, 'estimateForModel' | 'maxOutputTokens'> | undefined;
  /**
   * The prompt's size for the cost: the tokenizer's count (as the realtime reservation), or the byte bound
   * (never fewer tokens than bytes: dearer, and no tokenizing), for a key with no budget to hold it against.
   */
  promptCount: 'exact' | 'upper-bound';
  /** Epoch ms whose prices apply: the batch's submission. */
  atMs: number;
}

/** As admission decides for a realtime request: tokenize only when a budget (the key's or its team's) holds the cost. */
export function choosePromptCount(key: KeyInfo): BatchLineCheckDeps['promptCount'] {
  return hasBudgets(key) ? 'exact' : 'upper-bound';
}

export function createBatchLineCheck(deps: BatchLineCheckDeps): CheckLineBody {
  return async (body, key) => {
    const decoded = deps.decode(body);
    const chat = decoded.kind === 'chat';
    const request = chat ? decoded.request : embeddingsRoutingRequest(decoded.request);
    const prompt = new PromptTokenEstimate(chat ? decoded.request : decoded.request.inputs);
    const route = await resolveRoute(deps.catalog, request.model, prompt, (model) => deps.allowModel(key, model), chat ? 'chat' : 'embedding');
    if (!chat) checkEmbeddingDimensions(route.model, decoded.request);
    const pricing = deps.pricing;
    if (pricing === undefined) return { model: route.model.name, maxCostMicros: 0 };
    const promptTokens = deps.promptCount === 'exact' ? await prompt.exact() : prompt.upperBound();
    // An embedding has no output; a chat answer is bounded by max_tokens, else the model's maximum output.
    const sent = request.max_completion_tokens ?? request.max_tokens;
    const ceiling = chat ? (sent ?? pricing.maxOutputTokens(route.model.name)) : 0;
    const maxCostMicros = pricing.estimateForModel({
      model: route.model,
      upstreamModelOf: (deployment) => resolveRouteUpstreamModel(route, deployment),
      promptTokens,
      maxCompletionTokens: ceiling,
      atMs: deps.atMs,
    });
    return { model: route.model.name, maxCostMicros };
  };
}
