// The gateway's herd_gateway_* families read from live state at scrape time: cache, queues, breakers,
// the ledger's backlog and the limit store; each source registers its own families.
import type { Registry } from 'prom-client';
import { createComputedCounter, createComputedGauge } from './computed-metric.ts';

/** The response cache's counters (the gateway's CacheStats fits). */
export interface CacheStatsSample {
  readonly memoryHits: number;
  readonly redisHits: number;
  readonly misses: number;
  readonly evictions: number;
  readonly entries: number;
  readonly bytes: number;
}

export interface QueueSample {
  /** Requests waiting, by priority class. */
  waiting: Readonly<Record<string, number>>;
}

export type BreakerStateLabel = 'closed' | 'half_open' | 'open';

export interface GatewayStateSources {
  cache?: () => CacheStatsSample;
  /** One entry per upstream model queue (`provider/upstream_model`), as priority admission keeps them. */
  modelQueues?: () => Iterable<QueueSample & { upstreamModel: string }>;
  /** One entry per provider account with limits. */
  providerQueues?: () => Iterable<QueueSample & { provider: string }>;
  /** One entry per configured deployment. */
  breakers?: () => Iterable<{ provider: string; upstreamModel: string; breaker: BreakerStateLabel }>;
  /** The ledger's write queue (LedgerStats fits): how far its database is behind. */
  ledger?: () => LedgerBacklogSample;
  /** Limit checks answered without Redis (fail_open / fail_closed), by mode. */
  limitsUnavailable?: () => Iterable<{ mode: string; count: number }>;
  /** Gateway requests being answered now, streams until their last byte: what an autoscaler reads. */
  requestsInFlight?: () => number;
}

export interface LedgerBacklogSample {
  behindRows: number;
  behindMs: number;
  failedFlushes: number;
  dropped: number;
  /** Set while the database has not been reached since start-up. */
  waitingForDatabase?: string | undefined;
}

/** Gauge values of herd_gateway_breaker_state. */
export const BREAKER_STATE_VALUES: Readonly<Record<BreakerStateLabel, number>> = { closed: 0, half_open: 1, open: 2 };

/** Registers the families read from live gateway state at scrape time; a missing source registers nothing. */
export function registerGatewayStateMetrics(registry: Registry, sources: GatewayStateSources): void {
  const { cache, modelQueues, providerQueues, breakers, ledger, limitsUnavailable, requestsInFlight } = sources;
  if (cache) registerCacheMetrics(registry, cache);
  if (modelQueues || providerQueues) registerQueueMetrics(registry, modelQueues, providerQueues);
  if (breakers) registerBreakerMetrics(registry, breakers);
  if (ledger) registerLedgerMetrics(registry, ledger);
  if (limitsUnavailable) registerLimitStoreMetrics(registry, limitsUnavailable);
  if (requestsInFlight) {
    createComputedGauge({
      registry,
      name: 'herd_gateway_requests_in_flight',
      help: 'Gateway requests (every dialect, embeddings) being answered now, streams until their last byte',
      labelNames: [],
      read: () => [{ labels: {}, value: requestsInFlight() }],
    });
  }
}

function registerCacheMetrics(registry: Registry, cache: NonNullable<GatewayStateSources['cache']>): void {
  createComputedCounter<'tier'>({
    registry,
    name: 'herd_gateway_cache_hits_total',
    help: 'Exact-match cache lookups answered, by the tier that had the entry',
    labelNames: ['tier'],
    read: () => {
      const s = cache();
      return [
        { labels: { tier: 'memory' }, value: s.memoryHits },
        { labels: { tier: 'redis' }, value: s.redisHits },
      ];
    },
  });
  const read = (value: (s: CacheStatsSample) => number) => () => [{ labels: {}, value: value(cache()) }];
  createComputedCounter({
    registry,
    name: 'herd_gateway_cache_misses_total',
    help: 'Exact-match cache lookups that found nothing this request may be served',
    labelNames: [],
    read: read((s) => s.misses),
  });
  createComputedCounter({
    registry,
    name: 'herd_gateway_cache_evictions_total',
    help: 'Entries the memory tier dropped to stay within its size bounds',
    labelNames: [],
    read: read((s) => s.evictions),
  });
  createComputedGauge({ registry, name: 'herd_gateway_cache_entries', help: 'Entries in the memory tier', labelNames: [], read: read((s) => s.entries) });
  createComputedGauge({ registry, name: 'herd_gateway_cache_bytes', help: 'Size of the answers in the memory tier, in bytes', labelNames: [], read: read((s) => s.bytes) });
}

function registerQueueMetrics(registry: Registry, modelQueues: GatewayStateSources['modelQueues'], providerQueues: GatewayStateSources['providerQueues']): void {
  if (modelQueues) {
    createComputedGauge<'upstream'>({
      registry,
      name: 'herd_gateway_queue_depth',
      help: 'Requests waiting for a slot on an upstream model (provider/upstream_model), all priorities',
      labelNames: ['upstream'],
      read: () => [...modelQueues()].map((q) => ({ labels: { upstream: q.upstreamModel }, value: sumWaiting(q) })),
    });
  }
  if (providerQueues) {
    createComputedGauge<'provider'>({
      registry,
      name: 'herd_gateway_provider_queue_depth',
      help: "Requests waiting for a provider account's RPM or concurrency limit, all priorities",
      labelNames: ['provider'],
      read: () => [...providerQueues()].map((q) => ({ labels: { provider: q.provider }, value: sumWaiting(q) })),
    });
  }
}

function registerBreakerMetrics(registry: Registry, breakers: NonNullable<GatewayStateSources['breakers']>): void {
  createComputedGauge<'provider' | 'upstream_model'>({
    registry,
    name: 'herd_gateway_breaker_state',
    help: 'Circuit breaker of each deployment: 0 closed, 1 half-open, 2 open',
    labelNames: ['provider', 'upstream_model'],
    read: () => [...breakers()].map((b) => ({ labels: { provider: b.provider, upstream_model: b.upstreamModel }, value: BREAKER_STATE_VALUES[b.breaker] })),
  });
}

function registerLedgerMetrics(registry: Registry, ledger: NonNullable<GatewayStateSources['ledger']>): void {
  const read = (value: (s: LedgerBacklogSample) => number) => () => [{ labels: {}, value: value(ledger()) }];
  createComputedGauge({
    registry,
    name: 'herd_gateway_ledger_behind_rows',
    help: 'Ledger rows the database does not hold yet (kept in the local spool while it is unreachable)',
    labelNames: [],
    read: read((s) => s.behindRows),
  });
  createComputedGauge({
    registry,
    name: 'herd_gateway_ledger_behind_seconds',
    help: 'Age of the oldest ledger row the database does not hold yet; 0 when it is up to date',
    labelNames: [],
    read: read((s) => s.behindMs / 1000),
  });
  createComputedGauge({
    registry,
    name: 'herd_gateway_ledger_ready',
    help: 'Whether the ledger has reached its database since start-up (migrations, spool replay and recovery done): 0 while it serves from the local spool alone',
    labelNames: [],
    read: read((s) => (s.waitingForDatabase === undefined ? 1 : 0)),
  });
  createComputedCounter({
    registry,
    name: 'herd_gateway_ledger_failed_writes_total',
    help: 'Batches of ledger rows the database refused or did not answer (retried)',
    labelNames: [],
    read: read((s) => s.failedFlushes),
  });
  createComputedCounter({
    registry,
    name: 'herd_gateway_ledger_dropped_rows_total',
    help: 'Ledger rows dropped from memory because the queue hit its bound during an outage (their spool files keep them for the next start)',
    labelNames: [],
    read: read((s) => s.dropped),
  });
}

function registerLimitStoreMetrics(registry: Registry, limitsUnavailable: NonNullable<GatewayStateSources['limitsUnavailable']>): void {
  createComputedCounter<'mode'>({
    registry,
    name: 'herd_gateway_limit_store_unavailable_total',
    help: 'Key limit checks decided without the limit store (Redis unreachable): allowed (fail_open) or refused (fail_closed)',
    labelNames: ['mode'],
    read: () => [...limitsUnavailable()].map((m) => ({ labels: { mode: m.mode }, value: m.count })),
  });
}

function sumWaiting(queue: QueueSample): number {
  let n = 0;
  for (const key in queue.waiting) n += queue.waiting[key] ?? 0;
  return n;
}
