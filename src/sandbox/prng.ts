/**
 * The sandbox's deterministic randomness: mulberry32, a 32-bit PRNG that is small, fast and good
 * enough for test data. Each generated customer gets its own stream (derived from the seed, the
 * variant and the customer's index), so one customer's data does not depend on how many others
 * were generated before it.
 */
import { mulberry32 } from '../kernel/prng.js';

/** A 32-bit seed for one labelled stream: FNV-1a over the seed and the labels. */
export function deriveSeed(seed: number, ...labels: readonly (string | number)[]): number {
  let hash = 0x811c9dc5;
  for (const char of [String(seed), ...labels.map(String)].join('|')) {
    hash ^= char.charCodeAt(0);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
  /** Uniform in [min, max). */
  float(min: number, max: number): number;
  /** True with probability p. */
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** One value, chosen with the given relative weights. */
  weighted<T>(choices: readonly (readonly [T, number])[]): T;
  /** `count` distinct items in random order (all of them when count ≥ length). */
  sample<T>(items: readonly T[], count: number): T[];
  /** Roughly normal (mean 0, deviation 1): the sum of uniforms, enough for amounts. */
  gauss(): number;
}

export function createRandom(seed: number): Random {
  const next = mulberry32(seed);
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  const pick = <T>(items: readonly T[]): T => {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(next() * items.length)] as T;
  };
  return {
    next,
    int,
    float: (min, max) => min + next() * (max - min),
    chance: (p) => next() < p,
    pick,
    weighted<T>(choices: readonly (readonly [T, number])[]): T {
      const total = choices.reduce((sum, [, weight]) => sum + weight, 0);
      let r = next() * total;
      for (const [value, weight] of choices) {
        r -= weight;
        if (r < 0) return value;
      }
      const last = choices.at(-1);
      if (last === undefined) throw new Error('weighted choice from an empty list');
      return last[0];
    },
    sample<T>(items: readonly T[], count: number): T[] {
      const pool = [...items];
      for (let i = pool.length - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1));
        [pool[i], pool[j]] = [pool[j] as T, pool[i] as T];
      }
      return pool.slice(0, Math.max(0, count));
    },
    gauss: () => (next() + next() + next() + next() + next() + next() - 3) * Math.SQRT2,
  };
}
