// What a request would cost on a deployment in the settlement currency: tokens × USD list price ×
// the provider's exchange rate (a ¥1/$ relay vs an official API billed at ¥7.3/$).
import type { CatalogDeployment } from './gateway-catalog.ts';

export interface TokenForecast {
  prompt: number;
  completion: number;
}

/** Settlement-currency units per million prompt and completion tokens. */
export function effectiveRates(deployment: CatalogDeployment): { input: number; output: number } {
  const rate = deployment.provider.settings.exchange_rate;
  return { input: deployment.price.input * rate, output: deployment.price.output * rate };
}

export function estimateDeploymentCost(deployment: CatalogDeployment, tokens: TokenForecast): number {
  const rates = effectiveRates(deployment);
  return (tokens.prompt * rates.input + tokens.completion * rates.output) / 1_000_000;
}

/**
 * A deployment at least as cheap as every other on both input and output, if there is one: then the
 * token counts cannot change the answer and the prompt need not be tokenized. First in config order wins ties.
 */
export function findDominantDeployment(candidates: readonly CatalogDeployment[]): CatalogDeployment | undefined {
  const rates = candidates.map(effectiveRates);
  const index = rates.findIndex((r) => rates.every((other) => r.input <= other.input && r.output <= other.output));
  return index === -1 ? undefined : candidates[index];
}
