// The web console's data routes on /admin/v1 (overview, requests, spend and its CSV, deployments,
// settings), plus the request tail and the serving pages: thin calls into ConsoleReads, which checks roles.
import { HerdError } from '../core/errors.ts';
import type { ConfigSources } from '../config/describe-config-sources.ts';
import type { ConsoleReads, ServingSummary, SettingsJson } from '../gateway/admin/console-reads.ts';
import { parseSince } from '../gateway/billing/usage-report.ts';
import type { RequestFeed } from '../gateway/billing/request-feed.ts';
import {
  deploymentsJson,
  overviewJson,
  requestDetailJson,
  requestPageJson,
  requestParams,
  requestsQuery,
  settingsJson,
  spendCsv,
  spendCsvQuery,
  spendJson,
  spendQuery,
} from './admin-console-schemas.ts';
import { type AdminRouteSpec, answer, defineAdminRoute } from './admin-route-spec.ts';
import { createRequestsTailRoute, RequestTails, type TailLimits } from './console/requests-tail-route.ts';
import { createServingAdminRoutes, type ServingAdminSource, ServingSummarySampler } from './console/serving-admin-routes.ts';

/** What the console routes read, per HTTP app. */
export interface ConsoleApi {
  reads: ConsoleReads;
  tails: RequestTails;
  serving?: ServingAdminSource | undefined;
  servingSummary?: (() => ServingSummary) | undefined;
  /** GET /admin/v1/settings: the effective configuration with sources (herd serve describes it); absent: 404. */
  settings?: (() => SettingsJson) | undefined;
}

/** The console's parts over a running gateway's feed and reads, (when this Herd serves models) the repository, and the described configuration. */
export function createConsoleApi(parts: { feed: RequestFeed; reads: ConsoleReads }, serving?: ServingAdminSource, settings?: ConfigSources, limits?: TailLimits): ConsoleApi {
  const sampler = serving ? new ServingSummarySampler(serving) : undefined;
  const described: SettingsJson | undefined = settings ? { config_file: settings.configFile, entries: settings.entries } : undefined;
  return {
    reads: parts.reads,
    tails: new RequestTails(parts.feed, limits),
    serving,
    ...(sampler ? { servingSummary: () => sampler.summary() } : {}),
    ...(described ? { settings: () => described } : {}),
  };
}

const DEFAULT_SPEND_SINCE = '30d';

export function createConsoleRoutes(api: () => ConsoleApi | undefined): AdminRouteSpec[] {
  const reads = (): ConsoleReads => {
    const found = api()?.reads;
    if (!found) throw new HerdError('NOT_FOUND', 'The console data API is not available on this server.');
    return found;
  };
  return [
    defineAdminRoute({
      method: 'GET',
      path: '/admin/v1/overview',
      operationId: 'getOverview',
      summary: "The console's overview: readiness, models, this replica's last 60 s of traffic, today's and this month's spend, top keys and models",
      response: overviewJson,
      handle: async ({ ctx }) => answer(200, await reads().overview(ctx, api()?.servingSummary?.())),
    }),
    defineAdminRoute({
      method: 'GET',
      path: '/admin/v1/requests',
      operationId: 'listRequests',
      summary: 'Recorded gateway requests, newest first, by key, model, status, dialect and time; cursor pagination',
      query: requestsQuery,
      response: requestPageJson,
      handle: async ({ ctx, query, now }) =>
        answer(
          200,
          await reads().listRequests(ctx, {
            key: query.key,
            model: query.model,
            status: query.status,
            dialect: query.dialect,
            sinceMs: query.since === undefined ? undefined : parseTime(query.since, now, 'since'),
            untilMs: query.until === undefined ? undefined : parseTime(query.until, now, 'until'),
            limit: clamp(query.limit, 50, 500),
            cursor: query.cursor,
          }),
        ),
    }),
    createRequestsTailRoute(() => api()?.tails),
    defineAdminRoute({
      method: 'GET',
      path: '/admin/v1/requests/:id',
      operationId: 'getRequest',
      summary: 'One request with its attempts (this replica sees its own before the ledger commits them)',
      params: requestParams,
      response: requestDetailJson,
      handle: async ({ ctx, params }) => answer(200, await reads().getRequest(ctx, params.id)),
    }),
    defineAdminRoute({
      method: 'GET',
      path: '/admin/v1/spend',
      operationId: 'getSpend',
      summary: 'Spend and tokens by day, key, team, model or provider over at most 400 days; cursor pagination',
      query: spendQuery,
      response: spendJson,
      handle: async ({ ctx, query, now }) => answer(200, await reads().spend(ctx, { ...spendRange(query, now), limit: clamp(query.limit, 100, 1000), cursor: query.cursor })),
    }),
    defineAdminRoute({
      method: 'GET',
      path: '/admin/v1/spend.csv',
      operationId: 'getSpendCsv',
      summary: 'The spend rows as CSV (every page, at most 10,000 groups), money in decimal units',
      query: spendCsvQuery,
      response: spendCsv,
      contentType: 'text/csv',
      handle: async ({ ctx, query, now }) => {
        const range = spendRange(query, now);
        const { csv, truncated } = await reads().spendCsv(ctx, range);
        const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
        return {
          status: 200,
          body: csv,
          contentType: 'text/csv; charset=utf-8',
          headers: {
            'content-disposition': `attachment; filename="herd-spend-by-${range.by}-${day(range.sinceMs)}-${day(range.untilMs)}.csv"`,
            ...(truncated ? { 'x-herd-truncated': 'true' } : {}),
          },
        };
      },
    }),
    defineAdminRoute({
      method: 'GET',
      path: '/admin/v1/deployments',
      operationId: 'listDeployments',
      summary: "Every model's deployments with their circuit breaker's state on this replica",
      response: deploymentsJson,
      handle: async ({ ctx }) => answer(200, reads().deployments(ctx)),
    }),
    defineAdminRoute({
      method: 'GET',
      path: '/admin/v1/settings',
      operationId: 'getSettings',
      summary: 'The effective configuration, each entry with where it came from; secrets masked',
      response: settingsJson,
      handle: async ({ ctx }) => answer(200, reads().settings(ctx, api()?.settings)),
    }),
    ...createServingAdminRoutes(() => api()?.serving),
  ];
}

type SpendInput = { by?: 'day' | 'key' | 'team' | 'model' | 'provider' | undefined; since?: string | undefined; until?: string | undefined };

function spendRange(query: SpendInput, now: number) {
  return {
    by: query.by ?? 'day',
    sinceMs: parseTime(query.since ?? DEFAULT_SPEND_SINCE, now, 'since'),
    untilMs: query.until === undefined ? now : parseTime(query.until, now, 'until'),
  };
}

/** What /admin/v1/usage accepts (7d, 24h, an ISO date or time) and epoch ms. */
export function parseTime(text: string, now: number, param: 'since' | 'until'): number {
  if (/^\d{10,15}$/.test(text.trim())) return Number(text.trim());
  try {
    return parseSince(text, now);
  } catch (err) {
    if (err instanceof HerdError) throw new HerdError('INVALID_ARG', err.message.replace(/^since/, param), { param });
    throw err;
  }
}

function clamp(text: string | undefined, fallback: number, max: number): number {
  return text === undefined ? fallback : Math.min(max, Math.max(1, Number(text)));
}
