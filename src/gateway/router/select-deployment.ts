// Picks one deployment of a model by its strategy, among those the breakers let through:
// cheapest (effective price), weighted (random by weight), least-busy (in flight), lowest-latency (EWMA);
// and says when a session may stay on the deployment prompt-cache affinity remembers for it.
import type { RoutingStrategy } from '../../config/gateway-config-schema.ts';
import type { DeploymentStats, LatencyKind } from './deployment-stats.ts';
import { effectiveRates, estimateDeploymentCost, findDominantDeployment, type TokenForecast } from './estimate-deployment-cost.ts';
import type { CatalogDeployment } from './gateway-catalog.ts';

export interface SelectionContext {
  stats: DeploymentStats;
  /** Uniform in [0, 1); injectable so tests get a fixed sequence. */
  random: () => number;
  kind: LatencyKind;
  /** Called only when prices cross and the token mix decides. */
  forecastTokens: () => Promise<TokenForecast>;
}

export async function selectDeployment(strategy: RoutingStrategy, candidates: readonly CatalogDeployment[], context: SelectionContext): Promise<CatalogDeployment> {
  if (candidates.length === 0) throw new Error('selectDeployment needs at least one candidate');
  if (candidates.length === 1) return candidates[0]!;
  switch (strategy) {
    case 'cheapest':
      return selectCheapest(candidates, context);
    case 'weighted':
      return selectWeighted(candidates, context.random);
    case 'least-busy':
      return selectLeastBusy(candidates, context);
    case 'lowest-latency':
      return selectLowestLatency(candidates, context);
  }
}

/**
 * Whether a session may stay on `affine`, one of `candidates`. weighted, least-busy and lowest-latency
 * treat every deployment as fit, so a warm prompt cache decides; cheapest lets it stay only while it is
 * at the lowest price (no dearer on input and output than any other): affinity never makes a request
 * dearer by list price, and a session that failed over to a dearer deployment comes back when it can.
 */
export function acceptsAffinity(strategy: RoutingStrategy, affine: CatalogDeployment, candidates: readonly CatalogDeployment[]): boolean {
  if (strategy !== 'cheapest') return true;
  const own = effectiveRates(affine);
  return candidates.every((other) => {
    const rates = effectiveRates(other);
    return own.input <= rates.input && own.output <= rates.output;
  });
}

async function selectCheapest(candidates: readonly CatalogDeployment[], context: SelectionContext): Promise<CatalogDeployment> {
  const dominant = findDominantDeployment(candidates);
  if (dominant !== undefined) return dominant;
  const tokens = await context.forecastTokens();
  let best = candidates[0]!;
  let bestCost = estimateDeploymentCost(best, tokens);
  for (const candidate of candidates.slice(1)) {
    const cost = estimateDeploymentCost(candidate, tokens);
    if (cost < bestCost) {
      best = candidate;
      bestCost = cost;
    }
  }
  return best;
}

function selectWeighted(candidates: readonly CatalogDeployment[], random: () => number): CatalogDeployment {
  const total = candidates.reduce((sum, d) => sum + d.weight, 0);
  let point = random() * total;
  for (const candidate of candidates) {
    point -= candidate.weight;
    if (point < 0) return candidate;
  }
  return candidates[candidates.length - 1]!;
}

function selectLeastBusy(candidates: readonly CatalogDeployment[], context: SelectionContext): CatalogDeployment {
  const least = Math.min(...candidates.map((d) => context.stats.inFlight(d.key)));
  // Ties are broken at random so idle deployments share the load instead of the first taking it all.
  return pickRandom(
    candidates.filter((d) => context.stats.inFlight(d.key) === least),
    context.random,
  );
}

function selectLowestLatency(candidates: readonly CatalogDeployment[], context: SelectionContext): CatalogDeployment {
  // A deployment never measured is tried first: otherwise it would never get a sample.
  const unmeasured = candidates.find((d) => context.stats.latencyMs(d.key, context.kind) === undefined);
  if (unmeasured !== undefined) return unmeasured;
  let best = candidates[0]!;
  for (const candidate of candidates.slice(1)) {
    if (context.stats.latencyMs(candidate.key, context.kind)! < context.stats.latencyMs(best.key, context.kind)!) best = candidate;
  }
  return best;
}

function pickRandom<T>(items: readonly T[], random: () => number): T {
  return items[Math.min(items.length - 1, Math.floor(random() * items.length))]!;
}
