import { afterEach, describe, expect, it, vi } from 'vitest';
import { AlertDamping } from '../../../src/alerts/alert-damping.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('alert damping', () => {
  it('sends the first message at once, holds the rest of the window back, then sends the latest with the count', () => {
    vi.useFakeTimers({ now: 0 });
    const sent: string[] = [];
    const damping = new AlertDamping({ windowMs: 60_000, send: (text) => sent.push(text) });
    damping.notify('dest', 'failing');
    damping.notify('dest', 'recovered');
    damping.notify('dest', 'failing');
    damping.notify('dest', 'recovered');
    damping.notify('other', 'other failing'); // another subject has a window of its own
    expect(sent).toEqual(['failing', 'other failing']);
    vi.advanceTimersByTime(59_999);
    expect(sent).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(sent).toEqual(['failing', 'other failing', 'recovered (3 alerts about this held back since the last message; this is the latest)']);
    vi.advanceTimersByTime(120_000);
    expect(sent).toHaveLength(3); // nothing held back: nothing more to say
    damping.notify('dest', 'failing');
    expect(sent.at(-1)).toBe('failing');
    damping.close();
  });
});
