import { describe, expect, it } from 'vitest';
import { PassTimer } from '../../../src/start/pass-timer.js';

describe('PassTimer', () => {
  it('runs one pass at a time: runOnce joins the pass running', async () => {
    let runs = 0;
    let finish!: () => void;
    const timer = new PassTimer(() => {
      runs += 1;
      return new Promise<number>((resolve) => (finish = () => resolve(runs)));
    }, () => 60_000);
    const first = timer.runOnce();
    const joined = timer.runOnce();
    finish();
    expect(await Promise.all([first, joined])).toEqual([1, 1]);
    expect(runs).toBe(1);
  });

  it('schedules the next pass from the last report, undefined after a failure, and stops waiting for the running one', async () => {
    const seen: (string | undefined)[] = [];
    const errors: unknown[] = [];
    let calls = 0;
    const timer = new PassTimer(
      async () => {
        calls += 1;
        if (calls === 2) throw new Error('boom');
        return `pass ${calls}`;
      },
      (report) => {
        seen.push(report);
        return 1;
      },
      (err) => errors.push(err),
    );
    timer.start(1);
    while (seen.length < 3) await new Promise((resolve) => setTimeout(resolve, 5));
    await timer.stop();
    expect(timer.stopping).toBe(true);
    expect(seen.slice(0, 3)).toEqual(['pass 1', undefined, 'pass 3']);
    expect(errors).toEqual([new Error('boom')]);
    const after = calls;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(calls).toBe(after);
  });
});
