/**
 * Short and long runs of the reliability suites. `npm test` runs the short version; `npm run soak` sets
 * SOAK=1, which raises cycle and case counts (and the time limits with them).
 */
export const SOAK = process.env.SOAK === '1' || process.env.SOAK === 'true';

/** `short` under `npm test`, `soak` under `npm run soak`. */
export function scale(short: number, soak: number): number {
  return SOAK ? soak : short;
}

/** A per-test time limit: `shortMs` normally, `soakMs` in a soak run. */
export function timeLimit(shortMs: number, soakMs: number): number {
  return SOAK ? soakMs : shortMs;
}

/** The seed of a randomised run: RELIABILITY_SEED to repeat one, otherwise fresh (and printed). */
export function runSeed(): number {
  const given = process.env.RELIABILITY_SEED;
  return given !== undefined && given !== '' ? Number(given) : Math.floor(Math.random() * 2 ** 31);
}

/** mulberry32: a small seeded PRNG, so a failing run can be repeated with the printed seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The one summary line each suite prints: `[reliability] <suite>: key=value ...`. */
export function report(suite: string, figures: Record<string, string | number | boolean>): void {
  const text = Object.entries(figures)
    .map(([key, value]) => `${key}=${value}`)
    .join(' ');
  console.log(`[reliability] ${suite}${SOAK ? ' (soak)' : ''}: ${text}`);
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
