// Turns what the chat service reports about a finished request (its attempts, the usage and cost
// of the answer) into the ledger's rows: one per client request, one per upstream attempt.
import type { Usage } from '../protocol/chat-types.ts';
import type { AttemptRecord } from '../router/attempt-record.ts';
import type { AttemptRow, CostColumns, RequestRecord, TokenColumns } from './ledger.ts';
import type { CurrencyCode } from './money.ts';
import type { Cost } from './price-usage.ts';

export interface RequestFacts {
  requestId: string;
  keyId: string;
  keyName: string | undefined;
  /** The key's team, tags and metadata (RequestRecord's columns of the same names). */
  teamId?: string | undefined;
  teamName?: string | undefined;
  traceId?: string | undefined;
  keyTags?: readonly string[] | undefined;
  keyMetadata?: Readonly<Record<string, string>> | undefined;
  origin?: string | undefined;
  dialect?: string | undefined;
  /** The herd.yaml rule that matched the requested model, when routing got that far. */
  routeRule?: string | undefined;
  requestedModel: string;
  priority: string | undefined;
  /** Epoch ms when Herd received the request. */
  startedAt: number;
  finishedAt: number;
  /** Monotonic duration, when the caller measured one (more precise than finishedAt − startedAt). */
  latencyMs: number | undefined;
  ttftMs: number | undefined;
  httpStatus: number | undefined;
}

export interface AnswerFacts {
  model: string | undefined;
  provider: string | undefined;
  upstreamModel: string | undefined;
  status: string;
  usage: Usage | undefined;
  cost: Cost | undefined;
  cacheHit: boolean;
  savedMicros: number;
  attempts: readonly AttemptRecord[];
}

const NO_TOKENS: TokenColumns = { promptTokens: 0, cachedPromptTokens: 0, cacheWriteTokens: 0, completionTokens: 0, reasoningTokens: 0, estimated: false };

export function convertUsageToColumns(usage: Usage | undefined): TokenColumns {
  if (!usage) return NO_TOKENS;
  return {
    promptTokens: usage.promptTokens,
    cachedPromptTokens: usage.cachedPromptTokens,
    cacheWriteTokens: usage.cacheWriteTokens,
    completionTokens: usage.completionTokens,
    reasoningTokens: usage.reasoningTokens,
    estimated: usage.estimated,
  };
}

function costColumns(cost: Cost | undefined, currency: CurrencyCode): CostColumns {
  return cost
    ? { currency: cost.currency, costMicros: cost.costMicros, usdMicros: cost.usdMicros, listUsdMicros: cost.listUsdMicros }
    : { currency, costMicros: 0, usdMicros: 0, listUsdMicros: 0 };
}

export function createLedgerRecords(request: RequestFacts, answer: AnswerFacts, currency: CurrencyCode): { request: RequestRecord; attempts: AttemptRow[] } {
  // A cache hit consumed nothing upstream: its tokens are kept for reference, its cost is zero.
  const cost = answer.cacheHit ? undefined : answer.cost;
  const tokens = convertUsageToColumns(answer.usage);
  const record: RequestRecord = {
    requestId: request.requestId,
    keyId: request.keyId,
    keyName: request.keyName,
    teamId: request.teamId,
    teamName: request.teamName,
    traceId: request.traceId,
    keyTags: request.keyTags,
    keyMetadata: request.keyMetadata,
    origin: request.origin,
    dialect: request.dialect,
    routeRule: request.routeRule,
    cacheWrite1hTokens: answer.usage?.cacheWrite1hTokens,
    reportedReasoningTokens: answer.usage?.reportedReasoningTokens,
    requestedModel: request.requestedModel,
    model: answer.model,
    provider: answer.provider,
    upstreamModel: answer.upstreamModel,
    ...tokens,
    ...costColumns(cost, currency),
    status: answer.status,
    httpStatus: request.httpStatus,
    cacheHit: answer.cacheHit,
    savedMicros: answer.savedMicros,
    priority: request.priority,
    attempts: answer.attempts.length,
    latencyMs: request.latencyMs ?? Math.max(0, request.finishedAt - request.startedAt),
    ttftMs: request.ttftMs,
    priceSource: answer.cost?.price.source,
    priceEffectiveAt: answer.cost && Number.isFinite(answer.cost.price.effectiveFrom) ? answer.cost.price.effectiveFrom : undefined,
    startedAt: request.startedAt,
    finishedAt: request.finishedAt,
  };
  // Only the attempt that answered (the last 'ok') consumed the tokens; failed ones cost nothing.
  const answered = findLastIndex(answer.attempts, (a) => a.outcome === 'ok');
  // Attempts run one after another: each starts after the ones before it and their backoff waits
  // (Herd's own time between them, well under a millisecond, is not counted).
  let offset = 0;
  const attempts = answer.attempts.map((a, i): AttemptRow => {
    const startedAt = request.startedAt + offset;
    offset += a.durationMs + (a.waitMs ?? 0);
    const mine = i === answered && !answer.cacheHit;
    return {
      requestId: request.requestId,
      attempt: i + 1,
      model: a.model,
      provider: a.provider,
      upstreamModel: a.upstreamModel,
      outcome: a.outcome,
      httpStatus: a.status,
      ...(mine ? tokens : NO_TOKENS),
      ...costColumns(mine ? cost : undefined, currency),
      latencyMs: a.durationMs,
      // For a stream the answering attempt lasts until its first event: that is its time to first token.
      ttftMs: mine && request.ttftMs !== undefined ? a.durationMs : undefined,
      startedAt,
    };
  });
  return { request: record, attempts };
}

function findLastIndex<T>(items: readonly T[], test: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i] as T)) return i;
  return -1;
}
