// mulberry32: a tiny 32-bit PRNG whose output depends only on the seed (integer ops via Math.imul), so
// generated model weights, benchmark inputs and test choices are the same on every machine.

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
