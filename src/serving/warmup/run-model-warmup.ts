// Runs a loaded version's warmup samples before it becomes READY, as Triton does at instance load:
// every instance, every sample, `count` times; the first failing sample fails the load.
import { HerdError, toHerdError } from '../../core/errors.ts';
import type { ModelConfig } from '../model-config/model-config.ts';
import type { ModelScheduler } from '../scheduler/model-scheduler.ts';
import { validateInferRequest } from '../validate-infer-request.ts';
import { createWarmupSamples } from './create-warmup-requests.ts';

export interface WarmupTarget {
  config: ModelConfig;
  version: number;
  versionPath: string;
  scheduler: ModelScheduler;
}

/** Throws with Triton's `failed to run warmup sample '<name>': <errors>; ` wording. */
export async function runModelWarmup(target: WarmupTarget): Promise<void> {
  const { config } = target;
  if (config.model_warmup.length === 0) return;
  const samples = createWarmupSamples(config, target.versionPath, target.version);
  const known = new Set(config.input.map((i) => i.name));
  for (const sample of samples) {
    // Herd's backends assume validated inputs; a sample that does not fit the model is its failure, not a crash.
    const first = sample.requests[0];
    if (first) {
      try {
        validateInferRequest(config, { id: first.id, inputs: first.inputs.filter((t) => known.has(t.name)), outputs: [] });
      } catch (err) {
        throw new HerdError('INVALID_ARG', `failed to run warmup sample '${sample.name}': ${toHerdError(err).message}; `);
      }
    }
    for (let iteration = 0; iteration < sample.count; iteration++) {
      const errors = await target.scheduler.warmUp(sample.requests);
      if (errors.length > 0) {
        throw new HerdError('INVALID_ARG', `failed to run warmup sample '${sample.name}': ${errors.map((e) => `${e.message}; `).join('')}`);
      }
    }
  }
}
