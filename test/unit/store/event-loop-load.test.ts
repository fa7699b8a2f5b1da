import { describe, expect, it } from 'vitest';
import { EventLoopLoad } from '../../../src/store/sqlite/event-loop-load.js';

describe('EventLoopLoad', () => {
  it('turns busy above the upper threshold and idle only below the lower one', async () => {
    const readings = [0.2, 0.7, 0.5, 0.3, 0.5, 0.9];
    const seen: boolean[] = [];
    let load: EventLoopLoad;
    await new Promise<void>((resolve) => {
      load = new EventLoopLoad({
        windowMs: 5,
        utilisation: () => {
          const next = readings.shift();
          if (next === undefined) resolve();
          return next ?? 0.5;
        },
      });
      const probe = setInterval(() => seen.push(load.busy()), 1);
      setTimeout(() => clearInterval(probe), 500).unref();
    });
    load!.stop();
    // Collapse repeats: idle (0.2), busy (0.7, then 0.5 keeps it), idle (0.3, then 0.5 keeps it), busy (0.9).
    const changes = seen.filter((busy, i) => i === 0 || busy !== seen[i - 1]);
    expect(changes).toEqual([false, true, false, true]);
    expect(load!.busy()).toBe(true);
  });

  it('reads a quiet event loop as not busy', async () => {
    const load = new EventLoopLoad({ windowMs: 10 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(load.busy()).toBe(false);
    load.stop();
  });

  it('reads a loop kept running as busy', async () => {
    const load = new EventLoopLoad({ windowMs: 10 });
    const until = performance.now() + 80;
    // Busy in slices, so the window timer still fires between them.
    while (performance.now() < until) {
      const sliceEnd = performance.now() + 9;
      while (performance.now() < sliceEnd);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(load.busy()).toBe(true);
    load.stop();
  });
});
