import { describe, expect, it } from 'vitest';
import { catchUpPauseMs, catchUpShare } from '../../../src/schema/schema-learner.js';

describe('the schema learner catching up', () => {
  it('pauses so that learning takes at most its share of the event loop', () => {
    // 50 ms of learning at a tenth: 450 ms of pause, so 50 of every 500 ms.
    expect(catchUpPauseMs(50, 0.1)).toBe(450);
    expect(catchUpPauseMs(30, 0.5)).toBe(30);
  });

  it('never stops: a whole share, or a pass that took no time, pauses 1 ms', () => {
    expect(catchUpPauseMs(80, 1)).toBe(1);
    expect(catchUpPauseMs(0, 0.1)).toBe(1);
  });

  it('takes the smaller share while the event loop is busy with webhooks', () => {
    const settings = { maxBusyShare: 0.1, maxBusyShareUnderLoad: 0.01 };
    expect(catchUpShare(settings, false)).toBe(0.1);
    expect(catchUpShare(settings, true)).toBe(0.01);
  });
});
