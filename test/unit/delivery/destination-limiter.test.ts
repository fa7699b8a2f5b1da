import { describe, expect, it } from 'vitest';
import { DEFAULT_DESTINATION_CONCURRENCY, MAX_TURN_WAIT_MS, MIN_TURN_WAIT_MS, createDestinationLimiter, destinationKey } from '../../../src/delivery/destination-limiter.js';

function clock(start = 0): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

describe('destinationKey', () => {
  it.each([
    ['https://hooks.zapier.com/hooks/catch/1/abc', 'https://hooks.zapier.com'],
    ['https://hooks.zapier.com:443/other', 'https://hooks.zapier.com'],
    ['http://127.0.0.1:8080/a?b=c', 'http://127.0.0.1:8080'],
    ['HTTPS://Example.COM/x', 'https://example.com'],
  ])('%s → %s', (url, key) => expect(destinationKey(url)).toBe(key));
});

describe('destination limiter: concurrency', () => {
  it('grants up to the limit, then null until a slot is released', () => {
    const limiter = createDestinationLimiter({ adaptive: false });
    const slots = [1, 2, 3].map(() => limiter.tryAcquire('a', { concurrency: 3 }));
    expect(slots.every((slot) => typeof slot === 'function')).toBe(true);
    expect(limiter.tryAcquire('a', { concurrency: 3 })).toBeNull();
    expect(limiter.tryAcquire('b', { concurrency: 3 })).not.toBeNull(); // other destinations unaffected
    slots[0]!();
    slots[0]!(); // releasing twice frees one slot only
    expect(limiter.inFlight('a')).toBe(2);
    expect(limiter.tryAcquire('a', { concurrency: 3 })).not.toBeNull();
    expect(limiter.tryAcquire('a', { concurrency: 3 })).toBeNull();
  });

  it('adaptive by default: starts at 128 in flight, half the default ceiling of 256', () => {
    expect(DEFAULT_DESTINATION_CONCURRENCY).toBe(256);
    const limiter = createDestinationLimiter();
    const granted = Array.from({ length: 200 }, () => limiter.tryAcquire('a')).filter(Boolean);
    expect(granted).toHaveLength(128);
    expect(limiter.destinations()).toEqual([{ destination: 'a', limit: 128, ceiling: 256, inFlight: 128 }]);
  });

  it('not adaptive: the ceiling is the limit', () => {
    const limiter = createDestinationLimiter({ adaptive: false });
    const granted = Array.from({ length: 12 }, () => limiter.tryAcquire('a', { concurrency: 10 })).filter(Boolean);
    expect(granted).toHaveLength(10);
    granted.forEach((release) => release!({ outcome: 'overload', durationMs: 1 }));
    expect(limiter.destinations()[0]!.limit).toBe(10);
  });

  it('healthy answers raise the limit up to the ceiling; overload lowers it, never below 1', () => {
    const limiter = createDestinationLimiter();
    const fill = (): Array<ReturnType<typeof limiter.tryAcquire>> => Array.from({ length: 64 }, () => limiter.tryAcquire('a', { concurrency: 40 })).filter(Boolean);
    for (let round = 0; round < 5; round += 1) fill().forEach((release) => release!({ outcome: 'ok', durationMs: 5 }));
    expect(limiter.destinations()[0]!.limit).toBe(40);
    for (let round = 0; round < 10; round += 1) fill().forEach((release) => release!({ outcome: 'overload', durationMs: 5 }));
    expect(limiter.destinations()[0]!.limit).toBe(1);
    expect(fill()).toHaveLength(1);
  });

  it('an attempt without a sample (refused, aborted) leaves the limit as it was', () => {
    const limiter = createDestinationLimiter();
    Array.from({ length: 128 }, () => limiter.tryAcquire('a')).forEach((release) => release!());
    expect(limiter.destinations()[0]!.limit).toBe(128);
  });

  it('rules sharing a destination: each attempt stops at the lower of the shared limit and its rule ceiling', () => {
    const limiter = createDestinationLimiter();
    const wide = Array.from({ length: 4 }, () => limiter.tryAcquire('a', { concurrency: 50 }));
    expect(wide.every(Boolean)).toBe(true);
    expect(limiter.tryAcquire('a', { concurrency: 4 })).toBeNull(); // 4 in flight already
    expect(limiter.tryAcquire('a', { concurrency: 50 })).not.toBeNull();
    expect(limiter.destinations()[0]!.ceiling).toBe(50);
  });

  it('keeps the limits of recent destinations, forgetting the oldest idle ones beyond 1,000', () => {
    const limiter = createDestinationLimiter();
    const busy = limiter.tryAcquire('first')!;
    for (let i = 0; i < 1_100; i += 1) limiter.tryAcquire(`d${i}`)!();
    const seen = limiter.destinations().map((view) => view.destination);
    expect(seen).toHaveLength(1_000);
    expect(seen[0]).toBe('first'); // in flight: kept
    expect(seen.at(-1)).toBe('d1099');
    busy();
    expect(limiter.inFlight('first')).toBe(0);
  });
});

describe('destination limiter: rate (token bucket)', () => {
  it.each([
    // [ratePerSecond, ms between tries, tries, expected grants]
    [5, 0, 10, 5], // burst of one second's worth
    [5, 200, 10, 10], // exactly the rate: every try granted
    [5, 100, 10, 9], // twice the rate: the burst of 5 drains, refilling one per 200 ms
    [1, 500, 6, 3],
    [0.5, 1000, 6, 3], // fractional rate: bucket of one
    [100, 1, 300, 100 + 29], // 100 burst, then 0.1 token per ms
  ])('rate %d/s, a try every %d ms, %d tries → %d granted', (ratePerSecond, gap, tries, expected) => {
    const time = clock();
    const limiter = createDestinationLimiter({ now: time.now });
    let granted = 0;
    for (let i = 0; i < tries; i += 1) {
      const release = limiter.tryAcquire('a', { ratePerSecond, concurrency: 1000 });
      if (release) {
        granted += 1;
        release();
      }
      time.advance(gap);
    }
    expect(granted).toBe(expected);
  });

  it('a refused rate check does not hold a concurrency slot', () => {
    const time = clock();
    const limiter = createDestinationLimiter({ now: time.now });
    expect(limiter.tryAcquire('a', { ratePerSecond: 1 })).not.toBeNull();
    expect(limiter.tryAcquire('a', { ratePerSecond: 1 })).toBeNull();
    expect(limiter.inFlight('a')).toBe(1);
  });
});

describe('destination limiter: turns of rows refused for the rate', () => {
  const D = 'https://hooks.slack.com';

  it('gives each refused row the next token after the one before, no sooner than MIN_TURN_WAIT_MS', () => {
    const c = clock(1_000);
    const limiter = createDestinationLimiter({ now: c.now });
    const limits = { ratePerSecond: 2 };
    expect(limiter.tryAcquire(D, limits)).not.toBeNull();
    expect(limiter.tryAcquire(D, limits)).not.toBeNull();
    expect(limiter.tryAcquire(D, limits)).toBeNull();
    // No token left: the next comes in 500 ms, then one every 500 ms.
    expect([limiter.nextTurn(D, limits), limiter.nextTurn(D, limits), limiter.nextTurn(D, limits)]).toEqual([1_500, 2_000, 2_500]);
    // At its turn a row finds its token.
    c.advance(500);
    expect(limiter.tryAcquire(D, limits)).not.toBeNull();
    // A fast rate: turns are one token apart, but never sooner than the minimum wait.
    const fast = createDestinationLimiter({ now: c.now });
    for (let i = 0; i < 100; i++) fast.tryAcquire(D, { ratePerSecond: 100 });
    expect(fast.nextTurn(D, { ratePerSecond: 100 })).toBe(c.now() + MIN_TURN_WAIT_MS);
    expect(fast.nextTurn(D, { ratePerSecond: 100 })).toBe(c.now() + MIN_TURN_WAIT_MS + 10);
  });

  it('gives rows beyond the farthest turn that turn', () => {
    const c = clock(0);
    const limiter = createDestinationLimiter({ now: c.now });
    limiter.tryAcquire(D, { ratePerSecond: 1 });
    expect(limiter.tryAcquire(D, { ratePerSecond: 1 })).toBeNull();
    const turns = Array.from({ length: 70 }, () => limiter.nextTurn(D, { ratePerSecond: 1 })!);
    expect(turns.slice(0, 3)).toEqual([1_000, 2_000, 3_000]);
    expect(turns.slice(58, 62)).toEqual([59_000, 60_000, MAX_TURN_WAIT_MS, MAX_TURN_WAIT_MS]);
    expect(Math.max(...turns)).toBe(MAX_TURN_WAIT_MS);
  });
});

describe('destination limiter: turns of rows refused for the concurrency limit', () => {
  const D = 'https://hooks.zapier.com';

  it('spaces turns by half the time in which the destination frees a slot (its usual latency over its limit)', () => {
    const c = clock(0);
    const limiter = createDestinationLimiter({ now: c.now });
    const limits = { concurrency: 8 }; // adaptive: 4 in flight at first
    const slots = Array.from({ length: 4 }, () => limiter.tryAcquire(D, limits)!);
    expect(limiter.tryAcquire(D, limits)).toBeNull();
    // No answer yet: when a slot frees is not known.
    expect(limiter.nextTurn(D, limits)).toBeNull();
    c.advance(400);
    slots.pop()!({ outcome: 'ok', durationMs: 400 });
    // The answer may raise the limit: fill it again.
    while (limiter.tryAcquire(D, limits)) slots.push(slots[0]!);
    const limit = limiter.destinations()[0]!.limit;
    expect(limiter.inFlight(D)).toBe(limit);
    const spacing = 400 / limit / 2;
    expect([limiter.nextTurn(D, limits), limiter.nextTurn(D, limits)]).toEqual([400 + MIN_TURN_WAIT_MS, 400 + MIN_TURN_WAIT_MS + spacing]);
  });

  it('holds for the next free slots what the destination takes before the nearest turn, at least one round', () => {
    const c = clock(0);
    const limiter = createDestinationLimiter({ now: c.now });
    const limits = { concurrency: 8 };
    const first = limiter.tryAcquire(D, limits)!;
    // No answer yet: one round, its attempts in flight.
    expect(limiter.rowsWorthHolding(D, limits)).toBe(1);
    first({ outcome: 'ok', durationMs: 50 });
    while (limiter.tryAcquire(D, limits));
    const limit = limiter.destinations()[0]!.limit;
    expect(limiter.rowsWorthHolding(D, limits)).toBe(Math.floor((limit * MIN_TURN_WAIT_MS) / 50));
    expect(limiter.rowsWorthHolding('https://never.example', limits)).toBe(0);
  });

  it('has no turn when the limit is not adaptive (no latency is followed), or for a destination it never saw', () => {
    const limiter = createDestinationLimiter({ adaptive: false });
    const slot = limiter.tryAcquire(D, { concurrency: 1 })!;
    slot({ outcome: 'ok', durationMs: 50 });
    limiter.tryAcquire(D, { concurrency: 1 });
    expect(limiter.tryAcquire(D, { concurrency: 1 })).toBeNull();
    expect(limiter.nextTurn(D, { concurrency: 1 })).toBeNull();
    expect(limiter.nextTurn('https://never.example', { ratePerSecond: 5 })).toBeNull();
  });
});
