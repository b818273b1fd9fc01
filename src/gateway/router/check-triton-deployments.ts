// Start-up check of the in-process triton deployments: a model that is not loaded, or that speaks
// neither the text contract nor the embedding one, is reported once instead of surprising the first caller.
import type { InferencePort } from '../../core/inference-port.ts';
import type { GatewayCatalog } from './gateway-catalog.ts';
import { findEmbeddingTensors } from '../providers/triton/embed-texts.ts';
import { readTextContract } from '../providers/triton/triton-text-contract.ts';
import { parseUpstreamModel } from '../providers/triton/triton-provider.ts';

/** One warning line per deployment that cannot answer yet. */
export function checkTritonDeployments(catalog: GatewayCatalog, inference: InferencePort): string[] {
  const warnings: string[] = [];
  for (const model of catalog.models.values()) {
    for (const deployment of model.enabledDeployments) {
      if (deployment.provider.type !== 'triton' || deployment.provider.baseUrl !== undefined) continue;
      const { model: name, version } = parseUpstreamModel(deployment.upstreamModel);
      const where = `model '${model.name}', deployment ${deployment.key}`;
      const info = inference.describe(name, version);
      if (info === undefined) {
        warnings.push(`${where}: Triton model '${deployment.upstreamModel}' is not loaded; it answers upstream-unavailable (fallbacks apply) until it is`);
        continue;
      }
      try {
        readTextContract(deployment.provider.name, info);
      } catch (chatError) {
        try {
          findEmbeddingTensors(deployment.provider.name, info);
        } catch {
          warnings.push(`${where}: ${(chatError as Error).message}`);
        }
      }
    }
  }
  return warnings;
}
