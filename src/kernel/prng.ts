/**
 * mulberry32: a 32-bit PRNG that is small, fast and good enough for test data and for samples
 * that must be drawn again from the same seed (the sandbox's data, reconcile's `--seed`).
 */

/** Uniform numbers in [0, 1), the same sequence for the same 32-bit seed. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
