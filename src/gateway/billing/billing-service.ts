// Billing as the request path uses it: estimateForModel() and reserve() before going upstream, then one finish()
// that prices what happened, settles or releases the reservation, and queues the ledger rows.
import type { AttemptIntent } from './ledger-intents.ts';
import { DEFAULT_MAX_OUTPUT_TOKENS, type BillingConfig } from '../../config/billing-config-schema.ts';
import type { GatewayConfig } from '../../config/gateway-config-schema.ts';
import type { HerdError } from '../../core/errors.ts';
import type { Usage } from '../protocol/chat-types.ts';
import type { IngressDialect } from '../protocol/ingress-dialect.ts';
import { UpstreamRouteError } from '../router/attempt-record.ts';
import type { CatalogDeployment, CatalogModel } from '../router/gateway-catalog.ts';
import { createLedgerRecords, type AnswerFacts } from './create-ledger-records.ts';
import type { BudgetLine, Ledger, ReleaseResult, RequestRecord, Reservation, ReserveInput, SettleResult } from './ledger.ts';
import type { CurrencyCode, Micros } from './money.ts';
import { createPriceCatalog, type PriceCatalog } from './price-catalog.ts';
import { createSettlementRates, priceTokens, type Cost, type SettlementRates } from './price-usage.ts';
import { createBatchDiscounts, findBatchPrice, priceBatchTokens, type BatchCost } from './batch-price.ts';
import type { Rational } from './rational.ts';
import type { CompletionMeta, ChatMeta } from '../router/chat-meta.ts';
import type { StreamResult } from '../protocol/stream-relay-types.ts';

/** How often settlements that failed (the ledger unreachable) are tried again, and how many are kept. */
const SETTLE_RETRY_MS = 2000;
const MAX_UNRESOLVED = 100_000;

export type BillableConfig = Pick<GatewayConfig, 'providers' | 'models'> & Partial<Pick<GatewayConfig, 'routes'>> & { billing?: BillingConfig };

export interface BillingServiceOptions {
  config: BillableConfig;
  ledger: Ledger;
  /** Wall clock, epoch ms. */
  now?: () => number;
}

export interface FinishBase {
  requestId: string;
  /** The request's trace (tracing on): the ledger row's trace_id, so a row leads to its spans. */
  traceId?: string | undefined;
  /** The key (KeyInfo fits): its team, tags and metadata land in the request row. */
  key: {
    id: string;
    name?: string | undefined;
    team?: { id: string; name: string } | undefined;
    tags?: readonly string[] | undefined;
    metadata?: Readonly<Record<string, string>> | undefined;
  };
  /** The budget lines reserve() held (planBudgets); a settlement that finds no reservation charges them. */
  lines?: readonly BudgetLine[] | undefined;
  /** Who called besides the key (a serving-side llm model), for the ledger's origin column. */
  origin?: string | undefined;
  /** The wire format the client spoke, for the ledger's dialect column; undefined: openai-chat. */
  dialect?: IngressDialect | undefined;
  /** The `model` the client sent. */
  requestedModel: string;
  /** The herd.yaml rule it matched (ResolvedRoute.rule), once routing got that far. */
  routeRule?: string | undefined;
  priority?: string | undefined;
  /** Epoch ms when the request arrived (prices in force then apply). */
  startedAt: number;
  /** Monotonic duration of the whole request, if measured. */
  latencyMs?: number;
  httpStatus?: number;
  /** Whether reserve() ran for this request (default true): decides whether there is a reservation to settle. */
  reserved?: boolean;
  /**
   * A line of a client batch: the row's batch_id, and the batch's one reservation is settled by this line's
   * cost (Ledger.settlePart, by requestId), not a reservation of its own (`reserved` is then ignored; a line
   * that got no answer settles nothing: the batch's release refunds it). `upstreamBatch`: answered through
   * the upstream's batch API, billed at the batch price; false: run realtime, billed at the realtime price.
   */
  batch?: { id: string; upstreamBatch: boolean } | undefined;
}

export type FinishInput = FinishBase &
  (
    | { outcome: 'completion'; meta: CompletionMeta }
    /** After `stream.result` resolved; ttftMs: from arrival to the first chunk being ready. */
    | { outcome: 'stream'; meta: ChatMeta; result: StreamResult; ttftMs?: number }
    /** Nothing answered (or the request was refused before going upstream). */
    | { outcome: 'error'; error: HerdError }
    /** Answered from Herd's cache: costs nothing, saves what the cached answer cost. */
    | { outcome: 'cache-hit'; model: string; provider: string; upstreamModel: string; usage: Usage }
  );

export interface FinishResult {
  /** The request's price (undefined when nothing answered); a cache hit's is what it saved. */
  cost: Cost | undefined;
  settlement: SettleResult | ReleaseResult | undefined;
  record: RequestRecord;
}

export class BillingService {
  readonly currency: CurrencyCode;
  readonly catalog: PriceCatalog;
  readonly rates: SettlementRates;
  /** billing.batch_discount with its defaults, by provider. */
  readonly batchDiscounts: ReadonlyMap<string, Rational>;
  readonly ledger: Ledger;
  /** Alert thresholds (percent) for owners that set none: billing.alerts.thresholds. */
  readonly defaultThresholds: readonly number[];
  private readonly config: BillableConfig;
  private readonly now: () => number;
  private readonly unresolved = new Map<string, () => Promise<unknown>>();
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(options: BillingServiceOptions) {
    this.ledger = options.ledger;
    this.config = options.config;
    this.defaultThresholds = options.config.billing?.alerts.thresholds ?? [50, 80, 100];
    this.now = options.now ?? Date.now;
    this.catalog = createPriceCatalog(options.config);
    this.rates = createSettlementRates(options.config);
    this.batchDiscounts = createBatchDiscounts(options.config.providers, options.config.billing?.batch_discount);
    this.currency = this.rates.currency;
  }

  /** As price(), for a batch line answered through the upstream's batch API: its batch price (the realtime one where it has none), with the realtime list price beside. */
  priceBatch(input: Parameters<BillingService['price']>[0]): BatchCost {
    const at = input.atMs ?? this.now();
    const price = findBatchPrice(this.catalog, this.batchDiscounts, input.provider, input.model, at, input.upstreamModel);
    return priceBatchTokens(input.usage, price ?? this.catalog.get(input.provider, input.model, at, input.upstreamModel), input.provider, this.rates);
  }

  /** Cost of `usage` on (provider, model) with the price in force at `atMs`; `upstreamModel`, the id sent, may match billing.prices' `match` entries. */
  price(input: {
    provider: string;
    model: string;
    upstreamModel?: string | undefined;
    usage: Pick<Usage, 'promptTokens' | 'cachedPromptTokens' | 'cacheWriteTokens' | 'completionTokens' | 'cacheWrite1hTokens'>;
    atMs?: number;
  }): Cost {
    const entry = this.catalog.get(input.provider, input.model, input.atMs ?? this.now(), input.upstreamModel);
    return priceTokens(input.usage, entry, input.provider, this.rates);
  }

  /**
   * What to reserve: the dearest deployment's cost for the prompt plus the completion limit (absent: as
   * many completion tokens as prompt tokens), on the model the flow's route resolved — the one price,
   * never a second name lookup. `upstreamModelOf`: the id each deployment would be sent (a pattern
   * route's own id), for `match` prices.
   */
  estimateForModel(input: {
    model: CatalogModel;
    promptTokens: number;
    maxCompletionTokens?: number | undefined;
    atMs?: number;
    upstreamModelOf?: (deployment: CatalogDeployment) => string;
  }): Micros {
    const at = input.atMs ?? this.now();
    const usage = { promptTokens: input.promptTokens, cachedPromptTokens: 0, cacheWriteTokens: 0, completionTokens: input.maxCompletionTokens ?? input.promptTokens };
    let dearest = 0;
    for (const d of input.model.deployments) {
      const upstreamModel = input.upstreamModelOf?.(d);
      dearest = Math.max(dearest, this.price({ provider: d.provider.name, model: input.model.name, upstreamModel, usage, atMs: at }).costMicros);
    }
    return dearest;
  }

  /** The most output tokens one answer of `model` may have: its max_output_tokens, else billing.default_max_output_tokens. */
  maxOutputTokens(model: string): number {
    return this.config.models[model]?.max_output_tokens ?? this.config.billing?.default_max_output_tokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
  }

  reserve(input: Omit<ReserveInput, 'currency'>): Promise<Reservation> {
    return this.ledger.reserve({ ...input, currency: this.currency });
  }

  /** Prices the outcome, commits the rows, then settles (or releases) the reservation. Rejects only if the ledger cannot settle. */
  /** Before an upstream call: the ledger's attempt intent (see LedgerSpool.intend). */
  intend(intent: AttemptIntent): void {
    this.ledger.intend?.(intent);
  }

  finish(input: FinishInput): Promise<FinishResult> {
    return this.finishDurably(input).done;
  }

  /**
   * finish() in two steps: `committed` settles once the request's rows would survive the process being
   * killed (a transport writes the answer's last byte after it: an answered request is never missing
   * from the ledger), `done` once the reservation is settled too; `cost` is the request's price as its
   * row records it, known at once.
   */
  finishDurably(input: FinishInput): { committed: Promise<void>; done: Promise<FinishResult>; cost: Cost | undefined } {
    const finishedAt = this.now();
    const answer = this.describeAnswer(input);
    const records = createLedgerRecords(
      {
        requestId: input.requestId,
        keyId: input.key.id,
        keyName: input.key.name,
        teamId: input.key.team?.id,
        traceId: input.traceId,
        teamName: input.key.team?.name,
        keyTags: input.key.tags,
        keyMetadata: input.key.metadata,
        origin: input.origin,
        dialect: input.dialect,
        routeRule: input.routeRule,
        requestedModel: input.requestedModel,
        priority: input.priority,
        startedAt: input.startedAt,
        finishedAt,
        latencyMs: input.latencyMs,
        ttftMs: input.outcome === 'stream' ? (input.ttftMs ?? sumAttemptTime(input.meta)) : undefined,
        httpStatus: input.httpStatus,
      },
      answer,
      this.currency,
    );
    const { attempts } = records;
    const request = input.batch === undefined ? records.request : withBatch(records.request, input.batch.id, answer.cost);
    let committed: Promise<void>;
    try {
      committed = this.ledger.record(request, attempts);
    } catch (err) {
      committed = Promise.reject(err);
    }
    committed.catch(() => undefined);
    return { committed, done: this.settleAfter(committed, input, answer, request), cost: answer.cost };
  }

  /**
   * The settlement follows the rows' commit: should the process die in between, recover() finds the open
   * reservation next to its request row and settles it at that cost. Spend counters exist for budget
   * decisions, so only a reserved request (a key with a budget) settles; an unreserved one is charged by
   * its request row alone (a transaction per request cost a third of the gateway's throughput).
   */
  private async settleAfter(committed: Promise<void>, input: FinishInput, answer: AnswerFacts, request: RequestRecord): Promise<FinishResult> {
    if (input.batch !== undefined) return this.settleBatchLine(committed, input, input.batch.id, answer, request);
    const reserved = input.reserved ?? true;
    let settlement: SettleResult | ReleaseResult | undefined;
    if (reserved) {
      await committed.catch(() => undefined);
      const resolve =
        answer.model === undefined
          ? () => this.ledger.release(input.requestId)
          : () => this.ledger.settle(input.requestId, { costMicros: request.costMicros, keyId: input.key.id, lines: input.lines, atMs: input.startedAt });
      try {
        settlement = await resolve();
      } catch (err) {
        // The database is away (an outage): both calls are idempotent by request id, so try again until it
        // answers instead of holding the estimate against the key's budget until the next start's recovery.
        if ((err as Partial<HerdError>).code === 'UNAVAILABLE') this.retryLater(input.requestId, resolve);
        throw err;
      }
    }
    return { cost: answer.cost, settlement, record: request };
  }

  /** A batch line: its cost moves from the batch's reservation to settled spend once its row is committed (idempotent by request id). */
  private async settleBatchLine(committed: Promise<void>, input: FinishInput, batchId: string, answer: AnswerFacts, request: RequestRecord): Promise<FinishResult> {
    if (answer.model === undefined) return { cost: answer.cost, settlement: undefined, record: request };
    await committed.catch(() => undefined);
    const resolve = () => this.ledger.settlePart(batchId, input.requestId, request.costMicros, input.startedAt);
    try {
      await resolve();
    } catch (err) {
      const code = (err as Partial<HerdError>).code;
      // A batch whose owner had no budget at submission holds no reservation: the row alone records the cost.
      if (code === 'NOT_FOUND') return { cost: answer.cost, settlement: undefined, record: request };
      if (code === 'UNAVAILABLE') this.retryLater(input.requestId, resolve);
      throw err;
    }
    return { cost: answer.cost, settlement: undefined, record: request };
  }

  /** Settlements and releases waiting for the ledger to answer again (see retryLater). */
  pendingSettlements(): number {
    return this.unresolved.size;
  }

  private retryLater(requestId: string, resolve: () => Promise<unknown>): void {
    if (this.unresolved.size >= MAX_UNRESOLVED) return; // the next start's recovery settles the rest
    this.unresolved.set(requestId, resolve);
    this.retryTimer ??= setTimeout(() => void this.retryUnresolved(), SETTLE_RETRY_MS).unref();
  }

  /** In the order they failed; stops at the first failure (the database is still away) and tries again later. */
  private async retryUnresolved(): Promise<void> {
    for (const [requestId, resolve] of [...this.unresolved]) {
      try {
        await resolve();
        this.unresolved.delete(requestId);
      } catch {
        break;
      }
    }
    this.retryTimer = this.unresolved.size > 0 ? setTimeout(() => void this.retryUnresolved(), SETTLE_RETRY_MS).unref() : undefined;
  }

  private describeAnswer(input: FinishInput): AnswerFacts {
    const atBatchPrice = input.batch?.upstreamBatch === true;
    const priced = (provider: string, model: string, upstreamModel: string, usage: Usage) =>
      (atBatchPrice ? this.priceBatch : this.price).call(this, { provider, model, upstreamModel, usage, atMs: input.startedAt });
    switch (input.outcome) {
      case 'completion':
      case 'stream': {
        const usage = input.outcome === 'completion' ? input.meta.usage : input.result.usage;
        const status = input.outcome === 'completion' || input.result.outcome === 'completed' ? 'ok' : input.result.outcome;
        const cost = priced(input.meta.provider, input.meta.model, input.meta.upstreamModel, usage);
        return {
          model: input.meta.model,
          provider: input.meta.provider,
          upstreamModel: input.meta.upstreamModel,
          status,
          usage,
          cost,
          cacheHit: false,
          // An upstream answer's saving is its prompt-cache reads' discount (a cache hit's is its whole cost).
          savedMicros: cost.cacheReadSavedMicros,
          attempts: input.meta.attempts,
        };
      }
      case 'cache-hit': {
        const cost = priced(input.provider, input.model, input.upstreamModel, input.usage);
        return {
          model: input.model,
          provider: input.provider,
          upstreamModel: input.upstreamModel,
          status: 'ok',
          usage: input.usage,
          cost,
          cacheHit: true,
          savedMicros: cost.costMicros,
          attempts: [],
        };
      }
      case 'error':
        return {
          model: undefined,
          provider: undefined,
          upstreamModel: undefined,
          status: input.error.code,
          usage: undefined,
          cost: undefined,
          cacheHit: false,
          savedMicros: 0,
          attempts: input.error instanceof UpstreamRouteError ? input.error.attempts : [],
        };
    }
  }
}

/** A batch line's row: its batch, and the realtime list price beside what it was billed (equal when priced realtime). */
function withBatch(request: RequestRecord, batchId: string, cost: Cost | undefined): RequestRecord {
  const realtime = cost !== undefined && 'realtimeListUsdMicros' in cost ? (cost as BatchCost).realtimeListUsdMicros : request.listUsdMicros;
  return { ...request, batchId, realtimeListUsdMicros: realtime };
}

function sumAttemptTime(meta: ChatMeta): number {
  return meta.upstreamMs + meta.waitedMs + meta.overheadMs;
}
