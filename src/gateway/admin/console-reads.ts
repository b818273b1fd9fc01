// The web console's reads (GET /admin/v1/overview, requests, spend, deployments, settings), role-checked
// as the AdminService's: the ledger's page queries, the in-process request feed and traffic, the catalog's breakers.
import { HerdError } from '../../core/errors.ts';
import type { Ledger, SpendTotal, UsageGroup, UsageRow } from '../billing/ledger.ts';
import type { RecentTraffic, TrafficJson } from '../billing/recent-traffic.ts';
import type { RequestFeed } from '../billing/request-feed.ts';
import type { ChangeContext } from '../keys/key-store.ts';
import type { GatewayCatalog } from '../router/gateway-catalog.ts';
import { requireAccess } from './admin-roles.ts';
import { convertAttemptToJson, convertRequestToJson, convertSpendRowToJson, formatSpendCsv, type RequestJson, type SpendRowJson } from './convert-console-json.ts';

/** How long the overview's spend figures are reused: open consoles cost one round of ledger queries per 5 s per replica. */
const SPEND_CACHE_MS = 5_000;
/** The month's days before today change only by late rows: read again every 10 minutes (and when the day turns). */
const PAST_DAYS_CACHE_MS = 600_000;
const DAY_MS = 86_400_000;
/** The widest spend range one call may ask for. */
export const MAX_SPEND_DAYS = 400;
const CSV_PAGE = 1_000;
const CSV_MAX_GROUPS = 10_000;
const TOP = 5;

export type ConsoleLedger = Pick<Ledger, 'usagePage' | 'spendTotals' | 'listRequests' | 'getRequest'>;

/** A breaker as ChatService.health() describes it (only what the console reads). */
export interface BreakerView {
  key: string;
  breaker: 'closed' | 'half_open' | 'open';
}

/** GET /admin/v1/settings: the effective configuration, secrets masked (built by the settings describer). */
export interface SettingsJson {
  config_file: string | null;
  entries: { path: string; value: unknown; source: string }[];
}

export interface ConsoleReadsDeps {
  /** Undefined with billing.ledger: off: no spend, and requests only from the recent ring. */
  ledger?: ConsoleLedger | undefined;
  feed: RequestFeed;
  traffic: RecentTraffic;
  /** billing.currency, the overview's spend currency. */
  currency?: string | undefined;
  catalog?: GatewayCatalog | undefined;
  breakers?: (() => readonly BreakerView[]) | undefined;
  /** Absent until the settings describer is wired: GET /admin/v1/settings is then 404. */
  settings?: (() => SettingsJson) | undefined;
  now?: () => number;
}

/** What the HTTP side adds to the overview: the serving half (repository and inference statistics). */
export interface ServingSummary {
  ready: boolean;
  models: { ready: number; failed: number; total: number };
  inferencesPerSec: number;
}

export interface RequestsQuery {
  key?: string | undefined;
  model?: string | undefined;
  status?: string | undefined;
  dialect?: string | undefined;
  sinceMs?: number | undefined;
  untilMs?: number | undefined;
  limit: number;
  cursor?: string | undefined;
}

export interface SpendQuery {
  by: UsageGroup;
  sinceMs: number;
  untilMs: number;
  limit: number;
  cursor?: string | undefined;
}

type Totals = { requests: number; cost_micros: number; usd_micros: number; list_usd_micros: number; saving_usd_micros: number };
interface SpendOverview {
  spend: { currency: string; today: Totals; month: Totals } | null;
  top_keys: { id: string; name: string | null; requests: number; cost_micros: number }[];
  top_models: { model: string; requests: number; cost_micros: number }[];
}

export class ConsoleReads {
  private readonly deps: ConsoleReadsDeps;
  private readonly now: () => number;
  private spendCache: { at: number; value: Promise<SpendOverview> } | undefined;
  private pastDays: { at: number; day: number; value: Promise<SpendTotal[]> } | undefined;

  constructor(deps: ConsoleReadsDeps) {
    this.deps = deps;
    this.now = deps.now ?? Date.now;
  }

  get feed(): RequestFeed {
    return this.deps.feed;
  }

  async overview(ctx: ChangeContext, serving: ServingSummary | undefined) {
    requireAccess(ctx.actor, 'read', 'reading the overview');
    const gateway = this.gatewayModels();
    const traffic: TrafficJson = this.deps.traffic.snapshot();
    const spend = await this.spendOverview();
    const models = serving?.models ?? { ready: 0, failed: 0, total: 0 };
    return {
      ready: serving?.ready ?? true,
      models: { ready: models.ready + gateway.ready, failed: models.failed + gateway.failed, total: models.total + gateway.total },
      traffic,
      serving: { inferences_per_sec: serving?.inferencesPerSec ?? 0 },
      ...spend,
    };
  }

  async listRequests(ctx: ChangeContext, query: RequestsQuery): Promise<{ data: RequestJson[]; next_cursor: string | null }> {
    requireAccess(ctx.actor, 'read', 'listing requests');
    const ledger = this.requireLedger('the request list');
    const page = await ledger.listRequests({
      keyId: query.key,
      model: query.model,
      status: query.status,
      dialect: query.dialect,
      sinceMs: query.sinceMs,
      untilMs: query.untilMs,
      limit: query.limit,
      cursor: query.cursor,
    });
    return { data: page.rows.map(convertRequestToJson), next_cursor: page.nextCursor ?? null };
  }

  /** The recent ring first: a request is there before the ledger's flush commits it. */
  async getRequest(ctx: ChangeContext, requestId: string) {
    requireAccess(ctx.actor, 'read', `reading request ${requestId}`);
    const detail = this.deps.feed.recent(requestId) ?? (await this.deps.ledger?.getRequest(requestId));
    if (!detail) throw new HerdError('NOT_FOUND', `No request '${requestId}' in the ledger or among this replica's recent requests.`);
    return { ...convertRequestToJson(detail.request), attempts: detail.attempts.map(convertAttemptToJson) };
  }

  async spend(ctx: ChangeContext, query: SpendQuery) {
    requireAccess(ctx.actor, 'read', 'reading spend');
    const ledger = this.requireLedger('spend');
    checkSpendRange(query.sinceMs, query.untilMs);
    const page = await ledger.usagePage({ by: query.by, sinceMs: query.sinceMs, untilMs: query.untilMs, limit: query.limit, cursor: query.cursor });
    return {
      by: query.by,
      since: query.sinceMs,
      until: query.untilMs,
      data: page.rows.map((r) => convertSpendRowToJson(r, query.by)),
      next_cursor: page.nextCursor ?? null,
      total_groups: page.totalGroups,
    };
  }

  /** Every page of the query (1,000 groups a query, 10,000 at most) as CSV: the JSON's rows, money in decimal units. */
  async spendCsv(ctx: ChangeContext, query: Omit<SpendQuery, 'limit'>): Promise<{ csv: string; rows: number; truncated: boolean }> {
    requireAccess(ctx.actor, 'read', 'reading spend');
    const ledger = this.requireLedger('spend');
    checkSpendRange(query.sinceMs, query.untilMs);
    const rows: SpendRowJson[] = [];
    let cursor = query.cursor;
    let truncated = false;
    for (;;) {
      const page = await ledger.usagePage({ by: query.by, sinceMs: query.sinceMs, untilMs: query.untilMs, limit: Math.min(CSV_PAGE, CSV_MAX_GROUPS - rows.length), cursor });
      rows.push(...page.rows.map((r) => convertSpendRowToJson(r, query.by)));
      cursor = page.nextCursor;
      if (cursor === undefined) break;
      if (rows.length >= CSV_MAX_GROUPS) {
        truncated = true;
        break;
      }
    }
    return { csv: formatSpendCsv(query.by, rows), rows: rows.length, truncated };
  }

  deployments(ctx: ChangeContext) {
    requireAccess(ctx.actor, 'read', 'reading deployments');
    const states = new Map((this.deps.breakers?.() ?? []).map((b) => [b.key, b.breaker]));
    const data = [...(this.deps.catalog?.models.values() ?? [])].flatMap((model) =>
      model.deployments.map((d) => {
        const breaker = states.get(d.key) ?? 'closed';
        return { model: model.name, provider: d.provider.name, upstream_model: d.upstreamModel, kind: model.kind, breaker, healthy: d.provider.enabled && breaker !== 'open' };
      }),
    );
    return { data };
  }

  /** `describe`: the HTTP app's own describer, before the one given at construction. */
  settings(ctx: ChangeContext, describe?: () => SettingsJson): SettingsJson {
    requireAccess(ctx.actor, 'read', 'reading the settings');
    const settings = describe ?? this.deps.settings;
    if (!settings) throw new HerdError('NOT_FOUND', 'The settings view is not available on this server.');
    return settings();
  }

  private gatewayModels(): { ready: number; failed: number; total: number } {
    let ready = 0;
    let total = 0;
    for (const model of this.deps.catalog?.models.values() ?? []) {
      total += 1;
      if (model.enabledDeployments.length > 0) ready += 1;
    }
    return { ready, failed: total - ready, total };
  }

  private requireLedger(what: string): ConsoleLedger {
    if (!this.deps.ledger) throw new HerdError('NOT_FOUND', `The ledger is off (billing.ledger: off): ${what} is not available.`);
    return this.deps.ledger;
  }

  /** The month's totals before today (none on the 1st), cached for PAST_DAYS_CACHE_MS; a failed read is not kept. */
  private monthBefore(ledger: ConsoleLedger, day: number, month: number, now: number): Promise<SpendTotal[]> {
    const cached = this.pastDays;
    if (cached && cached.day === day && now - cached.at < PAST_DAYS_CACHE_MS) return cached.value;
    const value = day > month ? ledger.spendTotals(month, day) : emptyTotals();
    this.pastDays = { at: now, day, value };
    value.catch(() => {
      if (this.pastDays?.value === value) this.pastDays = undefined;
    });
    return value;
  }

  /** Today's and this month's totals (UTC) and today's top keys and models, reused for 5 s; a failed read is not kept. */
  private spendOverview(): Promise<SpendOverview> {
    const ledger = this.deps.ledger;
    if (!ledger) return Promise.resolve({ spend: null, top_keys: [], top_models: [] });
    const now = this.now();
    if (this.spendCache && now - this.spendCache.at < SPEND_CACHE_MS) return this.spendCache.value;
    const value = readSpendOverview(ledger, now, this.deps.currency, (day, month) => this.monthBefore(ledger, day, month, now));
    this.spendCache = { at: now, value };
    value.catch(() => {
      if (this.spendCache?.value === value) this.spendCache = undefined;
    });
    return value;
  }
}

type PastDays = (day: number, month: number) => Promise<SpendTotal[]>;

async function readSpendOverview(ledger: ConsoleLedger, now: number, currency: string | undefined, pastDays: PastDays): Promise<SpendOverview> {
  const day = now - (now % DAY_MS);
  const date = new Date(now);
  const month = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
  const [today, before, keys, models] = await Promise.all([
    ledger.spendTotals(day, now + 1),
    pastDays(day, month),
    ledger.usagePage({ by: 'key', sinceMs: day, untilMs: now + 1, limit: TOP }),
    ledger.usagePage({ by: 'model', sinceMs: day, untilMs: now + 1, limit: TOP }),
  ]);
  const thisMonth = addTotals(before, today);
  const code = currency ?? thisMonth[0]?.currency;
  return {
    spend: code === undefined ? null : { currency: code, today: totalsIn(today, code), month: totalsIn(thisMonth, code) },
    top_keys: keys.rows.map((r: UsageRow) => ({ id: r.group, name: r.keyName ?? null, requests: r.requests, cost_micros: r.costMicros })),
    top_models: models.rows.map((r: UsageRow) => ({ model: r.group, requests: r.requests, cost_micros: r.costMicros })),
  };
}

function addTotals(a: readonly SpendTotal[], b: readonly SpendTotal[]): SpendTotal[] {
  const sums = new Map<string, SpendTotal>();
  for (const t of [...a, ...b]) {
    const s = sums.get(t.currency);
    if (!s) sums.set(t.currency, { ...t });
    else {
      s.requests += t.requests;
      s.costMicros += t.costMicros;
      s.usdMicros += t.usdMicros;
      s.listUsdMicros += t.listUsdMicros;
    }
  }
  return [...sums.values()];
}

function totalsIn(totals: readonly SpendTotal[], currency: string): Totals {
  const t = totals.find((x) => x.currency === currency);
  if (!t) return { requests: 0, cost_micros: 0, usd_micros: 0, list_usd_micros: 0, saving_usd_micros: 0 };
  return { requests: t.requests, cost_micros: t.costMicros, usd_micros: t.usdMicros, list_usd_micros: t.listUsdMicros, saving_usd_micros: t.listUsdMicros - t.usdMicros };
}

function emptyTotals(): Promise<SpendTotal[]> {
  return Promise.resolve([]);
}

function checkSpendRange(sinceMs: number, untilMs: number): void {
  if (untilMs <= sinceMs) throw new HerdError('INVALID_ARG', 'until must be after since', { param: 'until' });
  if (untilMs - sinceMs > MAX_SPEND_DAYS * DAY_MS) {
    throw new HerdError('INVALID_ARG', `The spend range may span at most ${MAX_SPEND_DAYS} days: narrow since/until (or page through shorter ranges).`, { param: 'since' });
  }
}
