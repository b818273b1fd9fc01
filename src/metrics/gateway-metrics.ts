// The LLM gateway's herd_gateway_* families on the shared registry: per-request counters and histograms
// fed one plain-data sample per finished request (gauges read from live state: gateway-state-metrics.ts).
import { Histogram, type Registry } from 'prom-client';
import { createComputedCounter, type Sample } from './computed-metric.ts';

export type StatusClassLabel = '2xx' | '4xx' | '5xx';
export type CacheLabel = 'hit' | 'miss' | 'off';

/** Token counts by kind (the gateway's Usage fits): prompt includes cached reads and cache writes; completion includes reasoning. */
export interface TokenSample {
  promptTokens: number;
  cachedPromptTokens: number;
  cacheWriteTokens: number;
  completionTokens: number;
  reasoningTokens: number;
}

/** One finished client request (the gateway's GatewayRequestEvent fits). Durations in ms, money in USD micro-units. */
export interface GatewayRequestSample {
  model: string;
  provider: string;
  statusClass: StatusClassLabel;
  cache: CacheLabel;
  tokens?: TokenSample | undefined;
  usdMicros?: number | undefined;
  savedUsdMicros?: number | undefined;
  upstreamMs?: number | undefined;
  ttftMs?: number | undefined;
  queuedMs?: number | undefined;
  overheadMs?: number | undefined;
}

export interface GatewayMetricsOptions {
  registry: Registry;
  /** Canonical model names from config; any other value is counted as model="unknown". */
  models: Iterable<string>;
  /** Provider names from config; any other value (but "none") is counted as provider="unknown". */
  providers: Iterable<string>;
}

export interface GatewayRequestMetrics {
  onRequestFinished(sample: GatewayRequestSample): void;
}

export const UNKNOWN_LABEL = 'unknown';
/** The gateway's provider value when no upstream was tried (metrics/ does not import gateway/, so it is repeated here). */
const NO_PROVIDER = 'none';
const TOKEN_KINDS = ['prompt', 'cached_prompt', 'cache_write', 'completion', 'reasoning'] as const;

// Herd's own time is sub-millisecond on a cache hit and a few ms with routing and pricing: the low end needs the detail.
export const OVERHEAD_BUCKETS_S = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05];
export const UPSTREAM_BUCKETS_S = [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120];
export const TTFT_BUCKETS_S = [0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30];
export const QUEUE_WAIT_BUCKETS_S = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

type ModelProvider = 'model' | 'provider';

/** Cumulative totals of one (model, provider): plain numbers, turned into series only at scrape time. */
interface Totals {
  labels: Readonly<Record<ModelProvider, string>>;
  requests: Map<string, { statusClass: StatusClassLabel; cache: CacheLabel; count: number }>;
  tokens: number[] | undefined;
  /** Integer micro-units: summed exactly, divided once per scrape. */
  usdMicros: number | undefined;
  savedUsdMicros: number | undefined;
}

/**
 * Registers the per-request families and returns the callback that feeds them. Counters are plain
 * sums read at scrape time (a request costs a few additions, and USD is summed in exact micros);
 * histograms are prom-client's, with label objects built once per provider.
 */
export function registerGatewayRequestMetrics(options: GatewayMetricsOptions): GatewayRequestMetrics {
  const { registry } = options;
  const models = new Set(options.models);
  const providers = new Set([...options.providers, NO_PROVIDER]);
  const totals = new Map<string, Totals>();

  registerRequestCounters(registry, () => totals.values());
  const { upstream, ttft, queueWait, overhead } = createLatencyHistograms(registry);
  // prom-client hashes the label object on every observe; reusing one object per value at least spares the allocation.
  const providerLabels = new Map<string, { provider: string }>();
  const providerLabel = (provider: string) => {
    let labels = providerLabels.get(provider);
    if (labels === undefined) providerLabels.set(provider, (labels = { provider }));
    return labels;
  };
  const cacheLabels = { hit: { cache: 'hit' }, miss: { cache: 'miss' }, off: { cache: 'off' } } as const;

  const totalsFor = (model: string, provider: string): Totals => {
    const key = `${model}\u0000${provider}`;
    let t = totals.get(key);
    if (t === undefined) {
      t = { labels: { model, provider }, requests: new Map(), tokens: undefined, usdMicros: undefined, savedUsdMicros: undefined };
      totals.set(key, t);
    }
    return t;
  };

  return {
    onRequestFinished(s) {
      const model = models.has(s.model) ? s.model : UNKNOWN_LABEL;
      const provider = providers.has(s.provider) ? s.provider : UNKNOWN_LABEL;
      const t = totalsFor(model, provider);
      const requestKey = s.statusClass + s.cache;
      const counted = t.requests.get(requestKey);
      if (counted) counted.count++;
      else t.requests.set(requestKey, { statusClass: s.statusClass, cache: s.cache, count: 1 });

      const tokens = s.tokens;
      if (tokens) {
        const sums = (t.tokens ??= [0, 0, 0, 0, 0]);
        sums[0] += tokens.promptTokens;
        sums[1] += tokens.cachedPromptTokens;
        sums[2] += tokens.cacheWriteTokens;
        sums[3] += tokens.completionTokens;
        sums[4] += tokens.reasoningTokens;
      }
      if (s.usdMicros !== undefined) t.usdMicros = (t.usdMicros ?? 0) + s.usdMicros;
      if (s.savedUsdMicros !== undefined) t.savedUsdMicros = (t.savedUsdMicros ?? 0) + s.savedUsdMicros;

      if (s.upstreamMs !== undefined) upstream.observe(providerLabel(provider), s.upstreamMs / 1000);
      if (s.ttftMs !== undefined) ttft.observe(providerLabel(provider), s.ttftMs / 1000);
      if (s.queuedMs !== undefined) queueWait.observe(s.queuedMs / 1000);
      if (s.overheadMs !== undefined) overhead.observe(cacheLabels[s.cache], s.overheadMs / 1000);
    },
  };
}

/** The per-request counters, read from the totals at scrape time. */
function registerRequestCounters(registry: Registry, all: () => Iterable<Totals>): void {
  createComputedCounter<ModelProvider | 'status_class' | 'cache'>({
    registry,
    name: 'herd_gateway_requests_total',
    help: 'Chat completion requests through the gateway, by answering (or last tried) model and provider, HTTP status class and cache outcome',
    labelNames: ['model', 'provider', 'status_class', 'cache'],
    read: function* () {
      for (const t of all()) for (const r of t.requests.values()) yield { labels: { ...t.labels, status_class: r.statusClass, cache: r.cache }, value: r.count };
    },
  });
  createComputedCounter<ModelProvider | 'kind'>({
    registry,
    name: 'herd_gateway_tokens_total',
    help: 'Tokens used upstream, by kind (prompt includes cached_prompt and cache_write; completion includes reasoning); cache hits excluded',
    labelNames: ['model', 'provider', 'kind'],
    read: function* () {
      for (const t of all()) {
        if (t.tokens) for (let i = 0; i < TOKEN_KINDS.length; i++) yield { labels: { ...t.labels, kind: TOKEN_KINDS[i] as string }, value: t.tokens[i] ?? 0 };
      }
    },
  });
  const usd = (pick: (t: Totals) => number | undefined) =>
    function* (): Iterable<Sample<ModelProvider>> {
      for (const t of all()) {
        const micros = pick(t);
        if (micros !== undefined) yield { labels: t.labels, value: micros / 1e6 };
      }
    };
  createComputedCounter<ModelProvider>({
    registry,
    name: 'herd_gateway_cost_usd_total',
    help: "What answered requests cost, in true USD (billing's price at the market rate)",
    labelNames: ['model', 'provider'],
    read: usd((t) => t.usdMicros),
  });
  createComputedCounter<ModelProvider>({
    registry,
    name: 'herd_gateway_cache_saved_usd_total',
    help: 'What the answers served from the cache cost when first bought, in USD',
    labelNames: ['model', 'provider'],
    read: usd((t) => t.savedUsdMicros),
  });
}

/** The latency histograms (prom-client's own, observed per request). */
function createLatencyHistograms(registry: Registry) {
  const upstream = new Histogram<'provider'>({
    name: 'herd_gateway_upstream_latency_seconds',
    help: 'Time waiting on upstreams per answered request, failed attempts included; a stream until its last chunk',
    labelNames: ['provider'],
    buckets: UPSTREAM_BUCKETS_S,
    registers: [registry],
  });
  const ttft = new Histogram<'provider'>({
    name: 'herd_gateway_time_to_first_token_seconds',
    help: 'Streamed requests: from arrival to the first chunk being ready',
    labelNames: ['provider'],
    buckets: TTFT_BUCKETS_S,
    registers: [registry],
  });
  const queueWait = new Histogram({
    name: 'herd_gateway_queue_wait_seconds',
    help: 'Time a request that went upstream spent queued for admission (priority queue and provider limits)',
    buckets: QUEUE_WAIT_BUCKETS_S,
    registers: [registry],
  });
  const overhead = new Histogram<'cache'>({
    name: 'herd_gateway_overhead_seconds',
    help: "Herd's own time per request in the request flow: elapsed minus upstream and queue/retry waits",
    labelNames: ['cache'],
    buckets: OVERHEAD_BUCKETS_S,
    registers: [registry],
  });
  return { upstream, ttft, queueWait, overhead };
}
