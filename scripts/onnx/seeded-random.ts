// Deterministic weights for the example models: mulberry32, a tiny 32-bit PRNG whose output depends only
// on the seed (integer ops via Math.imul), so every machine generates byte-identical model files.

export type RandomSource = () => number;

/** A generator of doubles in [0, 1), the same sequence for the same seed everywhere. */
export function createSeededRandom(seed: number): RandomSource {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `count` FP32 values uniform in [-limit, limit). With limit = 1/sqrt(fanIn) a dense layer keeps activations
 * near unit scale, so outputs stay well inside FP32 precision for the numeric tests.
 */
export function createUniformWeights(random: RandomSource, count: number, limit: number): Float32Array {
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) out[i] = (random() * 2 - 1) * limit;
  return out;
}
