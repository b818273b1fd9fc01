// GET /admin/v1/routes: the routing table herd.yaml configures, read-only (config stays in herd.yaml):
// each model's deployments and fallbacks, the tiers and the pattern routes, from the gateway catalog.
import type { GatewayCatalog } from '../router/gateway-catalog.ts';

export function describeRoutes(catalog: GatewayCatalog) {
  return {
    models: [...catalog.models.values()].map((model) => ({
      name: model.name,
      kind: model.kind,
      aliases: [...model.aliases],
      strategy: model.strategy,
      fallbacks: [...model.fallbacks],
      available: model.enabledDeployments.length > 0,
      unavailable_reasons: [...model.unavailableReasons],
      deployments: model.deployments.map((d) => ({
        provider: d.provider.name,
        upstream_model: d.upstreamModel,
        weight: d.weight,
        enabled: d.provider.enabled,
      })),
    })),
    tiers: Object.fromEntries(catalog.tiers),
    patterns: catalog.patterns.map((p) => ({ glob: p.glob, model: p.model })),
  };
}

export type RoutesJson = ReturnType<typeof describeRoutes>;
