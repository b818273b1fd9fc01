// Deterministic weights for the example models, from the shared seeded PRNG (src/core/seeded-random.ts),
// so every machine generates byte-identical model files.
import type { RandomSource } from '../../src/core/seeded-random.ts';

export { createSeededRandom, type RandomSource } from '../../src/core/seeded-random.ts';

/**
 * `count` FP32 values uniform in [-limit, limit). With limit = 1/sqrt(fanIn) a dense layer keeps activations
 * near unit scale, so outputs stay well inside FP32 precision for the numeric tests.
 */
export function createUniformWeights(random: RandomSource, count: number, limit: number): Float32Array {
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) out[i] = (random() * 2 - 1) * limit;
  return out;
}
