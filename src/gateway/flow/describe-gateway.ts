// What GET /v1/models and GET /health report about the gateway: the models a key may use (with the
// routes to them), providers enabled or why not, and every deployment's breaker and load.
import { AUTO_MODEL, type TIER_NAMES } from '../../config/gateway-config-schema.ts';
import type { LedgerStats } from '../billing/ledger.ts';
import type { BreakerRegistry, BreakerState } from '../resilience/circuit-breaker.ts';
import type { DeploymentStats } from '../router/deployment-stats.ts';
import type { GatewayCatalog } from '../router/gateway-catalog.ts';
import { listModelNames, type ModelFilter } from '../router/resolve-route.ts';
import type { ModelListEntry } from '../protocol/model-list-entry.ts';

/**
 * The configured names, then each id a pattern route's upstreams list (`upstreamIds`, by provider) that
 * routes through that pattern: matched by it and by no name or earlier pattern. Each id once.
 */
export function listGatewayModels(catalog: GatewayCatalog, created: number, allowed?: ModelFilter, upstreamIds?: ReadonlyMap<string, readonly string[]>): ModelListEntry[] {
  const providersOf = (name: string) => [...new Set(catalog.models.get(name)?.enabledDeployments.map((d) => d.provider.name) ?? [])];
  const names = listModelNames(catalog, allowed);
  const listed = new Set(names);
  const patterned: ModelListEntry[] = [];
  for (const pattern of catalog.patterns) {
    if (!names.includes(pattern.model)) continue; // not usable now, or not this key's
    const providers = providersOf(pattern.model);
    for (const provider of providers) {
      for (const id of upstreamIds?.get(provider) ?? []) {
        if (listed.has(id) || !pattern.test(id) || catalog.findModel(id) !== undefined || catalog.findPattern(id) !== pattern) continue;
        listed.add(id);
        patterned.push({ id, object: 'model', created, owned_by: provider, herd: { kind: 'pattern', target: pattern.model, pattern: pattern.glob, providers } });
      }
    }
  }
  const configured = names.map((id): ModelListEntry => {
    const model = catalog.models.get(id);
    if (model !== undefined) {
      const providers = providersOf(id);
      const herd: ModelListEntry['herd'] = { kind: 'model', providers, aliases: model.aliases };
      if (model.contextWindow !== undefined) herd.context_window = model.contextWindow;
      return { id, object: 'model', created, owned_by: providers[0] ?? 'herd', herd };
    }
    if (id === AUTO_MODEL) return { id, object: 'model', created, owned_by: 'herd', herd: { kind: 'auto', providers: [] } };
    const target = catalog.tiers.get(id as (typeof TIER_NAMES)[number]) ?? '';
    return { id, object: 'model', created, owned_by: 'herd', herd: { kind: 'tier', target, providers: providersOf(target) } };
  });
  return [...configured, ...patterned];
}

/** The providers whose own model lists GET /v1/models needs: those serving a pattern route's model. */
export function listPatternProviders(catalog: GatewayCatalog): string[] {
  const names = new Set<string>();
  for (const pattern of catalog.patterns) for (const d of catalog.models.get(pattern.model)?.enabledDeployments ?? []) names.add(d.provider.name);
  return [...names];
}

export interface GatewayHealth {
  providers: Array<{ name: string; type: string; baseUrl: string | undefined; enabled: boolean; reason?: string }>;
  models: Array<{ name: string; available: boolean; reasons: string[] }>;
  breakers: Array<{
    /** `provider/upstream_model`. */
    key: string;
    provider: string;
    upstreamModel: string;
    models: string[];
    breaker: BreakerState;
    /** Requests and failures in the breaker's window. */
    requests: number;
    failures: number;
    /** While the breaker is open: ms until a probe may go out. */
    retryInMs?: number;
    inFlight: number;
    latencyMs: { chat?: number; stream?: number };
  }>;
}

/** /health's `ledger`: `behind` while rows wait for the database (spooled locally), by how much. */
export interface LedgerHealth {
  kind: 'sqlite' | 'postgres';
  state: 'ok' | 'behind';
  behind_rows: number;
  behind_seconds: number;
  /** Batches the database refused or did not answer since start (retried). */
  failed_writes: number;
  /** Present while the database has not been reached since start-up (rows spool meanwhile): why not. */
  database_unreachable?: string;
}

// A healthy ledger holds rows for up to flush_interval_ms before its batch: only older ones mean it is behind.
// One that has not reached its database since start-up is behind from the first second, with no row yet.
export function describeLedgerHealth(kind: LedgerHealth['kind'], stats: LedgerStats, flushIntervalMs: number): LedgerHealth {
  const behind = stats.waitingForDatabase !== undefined || (stats.behindRows > 0 && stats.behindMs > 2 * flushIntervalMs);
  return {
    kind,
    state: behind ? 'behind' : 'ok',
    behind_rows: stats.behindRows,
    behind_seconds: Math.round(stats.behindMs / 100) / 10,
    failed_writes: stats.failedFlushes,
    ...(stats.waitingForDatabase !== undefined ? { database_unreachable: stats.waitingForDatabase } : {}),
  };
}

export function describeGatewayHealth(catalog: GatewayCatalog, breakers: BreakerRegistry, stats: DeploymentStats): GatewayHealth {
  const providers = [...catalog.providers.values()].map((p) => {
    const entry: GatewayHealth['providers'][number] = { name: p.name, type: p.type, baseUrl: p.baseUrl, enabled: p.enabled };
    if (p.disabledReason !== undefined) entry.reason = p.disabledReason;
    return entry;
  });
  const models = [...catalog.models.values()].map((m) => ({
    name: m.name,
    available: m.enabledDeployments.length > 0,
    reasons: m.enabledDeployments.length > 0 ? [] : m.unavailableReasons,
  }));
  const breakerStates = new Map(breakers.snapshot().map((entry) => [entry.key, entry.snapshot]));
  const byKey = new Map<string, GatewayHealth['breakers'][number]>();
  for (const model of catalog.models.values()) {
    for (const d of model.enabledDeployments) {
      const existing = byKey.get(d.key);
      if (existing !== undefined) {
        existing.models.push(model.name);
        continue;
      }
      const breaker = breakerStates.get(d.key) ?? { state: 'closed' as const, requests: 0, failures: 0 };
      const entry: GatewayHealth['breakers'][number] = {
        key: d.key,
        provider: d.provider.name,
        upstreamModel: d.upstreamModel,
        models: [model.name],
        breaker: breaker.state,
        requests: breaker.requests,
        failures: breaker.failures,
        inFlight: stats.inFlight(d.key),
        latencyMs: {},
      };
      if (breaker.retryInMs !== undefined) entry.retryInMs = breaker.retryInMs;
      const chat = stats.latencyMs(d.key, 'chat');
      const stream = stats.latencyMs(d.key, 'stream');
      if (chat !== undefined) entry.latencyMs.chat = Math.round(chat);
      if (stream !== undefined) entry.latencyMs.stream = Math.round(stream);
      byKey.set(d.key, entry);
    }
  }
  return { providers, models, breakers: [...byKey.values()] };
}
