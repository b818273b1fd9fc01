// The gateway's one entry point: every chat request, whatever dialect the client spoke, goes through
// ChatGateway.handle(), and every embeddings request through embed(), on the same path: admission (the
// route resolved once, limits, cache decision, budget: admit-flight.ts), the cache branch (flight-cache.ts),
// the routed attempts (chat-service.ts), then one settlement however the request ends (flight-settlement.ts).
import { toHerdError, type HerdError } from '../../core/errors.ts';
import { BudgetExceededError } from '../billing/check-budgets.ts';
import { tapStreamForCache } from '../cache/tap-stream-for-cache.ts';
import type { ChatRequest } from '../protocol/chat-types.ts';
import type { EmbeddingsRequest } from '../protocol/embeddings-request.ts';
import type { IngressDialect } from '../protocol/ingress-dialect.ts';
import type { ModelListEntry } from '../protocol/model-list-entry.ts';
import type { CompletionMeta } from '../router/chat-meta.ts';
import { PromptTokenEstimate } from '../router/prompt-token-estimate.ts';
import type { ModelFilter } from '../router/resolve-route.ts';
import { isFinalRawPiece } from '../wire/is-final-raw-piece.ts';
import { admitFlight, reserveFlightBudget } from './admit-flight.ts';
import type { ChatCompletion, ChatStream } from './chat-service.ts';
import type { GatewayHealth } from './describe-gateway.ts';
import { checkEmbeddingDimensions, embeddingsRoutingRequest } from './embeddings-routing.ts';
import { answerFromCache } from './flight-cache.ts';
import { FlightSettlement } from './flight-settlement.ts';
import type { ChatGatewayDeps, Ending, Flight, GatewayAnswer, GatewayCaller, Progress, Settled } from './flight.ts';
import { UNKNOWN_MODEL, type CacheOutcome } from './gateway-observer.ts';
import { holdStreamEnd } from './hold-stream-end.ts';
import { endOperationSpan, failOperationSpan, startOperationSpan, traceFlight } from './operation-span.ts';
import { NO_FLOW_TRACING, type FlowTracing } from './flow-tracing.ts';
import type { HerdSpan } from '../../tracing/tracer.ts';

export type { CacheOutcome };
export type { CacheScope, ChatGatewayDeps, GatewayAnswer, GatewayCaller } from './flight.ts';

/** What the embeddings transport writes: the vectors in input order, the answering model and the x-herd-* facts. */
export interface EmbeddingsAnswer {
  vectors: Float32Array[];
  meta: CompletionMeta;
}

export class ChatGateway {
  private readonly settlement: FlightSettlement;
  private readonly settle: (flight: Flight, ending: Ending) => Settled;
  private readonly tracing: FlowTracing;

  constructor(private readonly deps: ChatGatewayDeps) {
    this.tracing = deps.tracing ?? NO_FLOW_TRACING;
    this.settlement = new FlightSettlement(deps);
    this.settle = (flight, ending) => this.settlement.settle(flight, ending);
  }

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
    const span = startOperationSpan(this.tracing, 'chat', request.model, caller);
    let answer: GatewayAnswer;
    try {
      answer = await this.run(request, caller, span);
    } catch (err) {
      failOperationSpan(span, err);
      throw err;
    }
    if (answer.kind === 'completion') endOperationSpan(span, answer.cache, answer.cost);
    else if (answer.cost === undefined) void answer.stream.result.then(() => endOperationSpan(span, answer.cache, undefined));
    else void answer.cost.then((cost) => endOperationSpan(span, answer.cache, cost));
    return answer;
  }

  private async run(request: ChatRequest, caller: GatewayCaller, span: HerdSpan): Promise<GatewayAnswer> {
    const t0 = performance.now();
    const progress: Progress = { model: UNKNOWN_MODEL, cache: 'off', calledUpstream: false };
    try {
      const flight = await admitFlight(this.deps, request, caller, t0, progress);
      traceFlight(this.tracing, span, flight);
      try {
        // Each step is entered only when it has work (a cache read, a budget): the flow's common case skips both.
        if (flight.policy?.read) {
          const hit = await answerFromCache(this.deps, flight, this.settle);
          if (hit !== undefined) return hit;
          progress.cache = 'miss';
        }
        if (flight.base.reserved) await this.reserveBudget(flight);
        progress.calledUpstream = true;
        return request.stream ? await this.stream(flight, progress.cache) : await this.complete(flight, progress.cache);
      } catch (err) {
        void flight.ticket?.settle(0);
        throw err;
      }
    } catch (err) {
      this.settlement.reportFailure(err, request.stream === true, caller.dialect, progress, t0);
      throw err;
    }
  }

  /** A budget refusal spent nothing and is an audit event; a ledger that cannot be reached fails the request, recorded as such. */
  private async reserveBudget(flight: Flight): Promise<void> {
    try {
      await reserveFlightBudget(this.deps, flight);
    } catch (err) {
      if (!(err instanceof BudgetExceededError)) void this.settle(flight, { outcome: 'error', error: toHerdError(err), reserved: false });
      throw err;
    }
  }

  /**
   * POST /v1/embeddings on the same path as chat: admitted (an embedding model the key may use, its
   * `dimensions`, TPM on the inputs, the budget), the same attempts and breakers, one settlement, no cache.
   * The ledger row's dialect is always `openai-embeddings`: the only body this operation reads.
   */
  async embed(request: EmbeddingsRequest, caller: GatewayCaller): Promise<EmbeddingsAnswer> {
    const span = startOperationSpan(this.tracing, 'embeddings', request.model, caller);
    try {
      const answer = await this.runEmbed(request, caller, span);
      endOperationSpan(span, 'off', undefined);
      return answer;
    } catch (err) {
      failOperationSpan(span, err);
      throw err;
    }
  }

  private async runEmbed(request: EmbeddingsRequest, caller: GatewayCaller, span: HerdSpan): Promise<EmbeddingsAnswer> {
    const t0 = performance.now();
    const progress: Progress = { model: UNKNOWN_MODEL, cache: 'off', calledUpstream: false };
    const embedding: GatewayCaller = { ...caller, dialect: 'openai-embeddings', passThrough: false };
    try {
      const routing = embeddingsRoutingRequest(request);
      const flight = await admitFlight(this.deps, routing, embedding, t0, progress, {
        kind: 'embedding',
        prompt: new PromptTokenEstimate(request.inputs),
        check: (route) => checkEmbeddingDimensions(route.model, request),
      });
      traceFlight(this.tracing, span, flight);
      try {
        if (flight.base.reserved) await this.reserveBudget(flight);
        progress.calledUpstream = true;
        let answer: EmbeddingsAnswer;
        try {
          answer = await this.deps.chat.embed(request, routing, flight.context);
        } catch (err) {
          void this.settle(flight, { outcome: 'error', error: toHerdError(err), reserved: flight.base.reserved ?? false });
          throw err;
        }
        const { meta } = answer;
        const overheadMs = Math.max(0, performance.now() - t0 - meta.upstreamMs - meta.waitedMs);
        await this.settle(flight, { outcome: 'embedding', meta, overheadMs }).committed;
        return answer;
      } catch (err) {
        void flight.ticket?.settle(0);
        throw err;
      }
    } catch (err) {
      this.settlement.reportFailure(err, false, 'openai-embeddings', progress, t0);
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
    if (flight.maxTokensCapped !== undefined) meta.maxTokensCapped = flight.maxTokensCapped;
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
    if (flight.maxTokensCapped !== undefined) meta.maxTokensCapped = flight.maxTokensCapped;
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
   * A request the transport refused before it reached handle() or embed() (no valid key, a body that does
   * not parse or validate): counted with the others, under no model and no provider.
   */
  reportRefused(error: HerdError, stream: boolean, dialect: IngressDialect = 'openai-chat'): void {
    this.settlement.reportRefused(error, stream, dialect);
  }
}
