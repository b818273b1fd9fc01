// Ledger rows and a small in-memory ledger of the console's four page queries (usagePage, spendTotals,
// listRequests, getRequest), counting its calls: what the console's unit tests run against.
import type {
  AttemptRow,
  RequestDetail,
  RequestListQuery,
  RequestPage,
  RequestRecord,
  SpendTotal,
  UsagePage,
  UsagePageQuery,
  UsageRow,
} from '../../../src/gateway/billing/ledger.ts';
import type { ConsoleLedger } from '../../../src/gateway/admin/console-reads.ts';

export function requestRecord(overrides: Partial<RequestRecord> = {}): RequestRecord {
  return {
    requestId: 'req-1',
    keyId: 'key-a',
    keyName: 'alice',
    teamId: undefined,
    teamName: undefined,
    requestedModel: 'gpt-4.1',
    model: 'gpt-4.1',
    provider: 'relay',
    upstreamModel: 'gpt-4.1',
    status: 'ok',
    httpStatus: 200,
    cacheHit: false,
    savedMicros: 0,
    priority: 'normal',
    attempts: 1,
    latencyMs: 120,
    ttftMs: undefined,
    priceSource: undefined,
    priceEffectiveAt: undefined,
    startedAt: 1_000,
    finishedAt: 1_120,
    promptTokens: 10,
    cachedPromptTokens: 0,
    cacheWriteTokens: 0,
    completionTokens: 20,
    reasoningTokens: 0,
    estimated: false,
    currency: 'CNY',
    costMicros: 1_500,
    usdMicros: 200,
    listUsdMicros: 250,
    ...overrides,
  };
}

export function attemptRow(overrides: Partial<AttemptRow> = {}): AttemptRow {
  return {
    requestId: 'req-1',
    attempt: 1,
    model: 'gpt-4.1',
    provider: 'relay',
    upstreamModel: 'gpt-4.1',
    outcome: 'ok',
    httpStatus: 200,
    latencyMs: 110,
    ttftMs: undefined,
    startedAt: 1_005,
    promptTokens: 10,
    cachedPromptTokens: 0,
    cacheWriteTokens: 0,
    completionTokens: 20,
    reasoningTokens: 0,
    estimated: false,
    currency: 'CNY',
    costMicros: 1_500,
    usdMicros: 200,
    listUsdMicros: 250,
    ...overrides,
  };
}

export function usageRow(group: string, costMicros: number, overrides: Partial<UsageRow> = {}): UsageRow {
  return {
    group,
    keyName: undefined,
    currency: 'CNY',
    requests: 1,
    failed: 0,
    cacheHits: 0,
    estimated: 0,
    promptTokens: 10,
    cachedPromptTokens: 0,
    cacheWriteTokens: 0,
    completionTokens: 20,
    reasoningTokens: 0,
    reportedReasoningTokens: 0,
    costMicros,
    usdMicros: Math.floor(costMicros / 7),
    listUsdMicros: Math.floor(costMicros / 6),
    savedMicros: 0,
    cacheWrite1hTokens: 0,
    cacheReadSavedMicros: 0,
    batchRequests: 0,
    batchSavedUsdMicros: 0,
    ...overrides,
  };
}

/** The four queries over arrays; `calls` counts each query, `lastQuery` keeps the last arguments. */
export class FakeConsoleLedger implements ConsoleLedger {
  readonly calls = { usagePage: 0, spendTotals: 0, listRequests: 0, getRequest: 0 };
  readonly usageQueries: UsagePageQuery[] = [];
  lastListQuery: RequestListQuery | undefined;
  constructor(
    public requests: RequestDetail[] = [],
    public usageRows: UsageRow[] = [],
    public totals: SpendTotal[] = [],
  ) {}

  async usagePage(query: UsagePageQuery): Promise<UsagePage> {
    this.calls.usagePage += 1;
    this.usageQueries.push(query);
    const start = query.cursor === undefined ? 0 : Number(query.cursor);
    const rows = this.usageRows.slice(start, start + query.limit);
    const next = start + query.limit < this.usageRows.length ? String(start + query.limit) : undefined;
    return { rows, nextCursor: next, totalGroups: this.usageRows.length };
  }

  async spendTotals(): Promise<SpendTotal[]> {
    this.calls.spendTotals += 1;
    return this.totals;
  }

  async listRequests(query: RequestListQuery): Promise<RequestPage> {
    this.calls.listRequests += 1;
    this.lastListQuery = query;
    return { rows: this.requests.slice(0, query.limit).map((d) => d.request), nextCursor: this.requests.length > query.limit ? 'next' : undefined };
  }

  async getRequest(requestId: string): Promise<RequestDetail | undefined> {
    this.calls.getRequest += 1;
    return this.requests.find((d) => d.request.requestId === requestId);
  }
}
