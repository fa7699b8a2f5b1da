import { describe, expect, it } from 'vitest';
import { ClockOffset } from '../../../../src/store/postgres/clock-offset.js';

/** A node clock and a database clock the test moves by hand; each read of the database takes `roundTripMs`. */
function clocks(databaseAheadMs: number, roundTripMs = 0): { node: { now: number }; offset: ClockOffset; setAhead(ms: number): void } {
  const node = { now: 1_000_000 };
  let ahead = databaseAheadMs;
  const offset = new ClockOffset(
    async () => {
      node.now += roundTripMs / 2;
      const database = node.now + ahead;
      node.now += roundTripMs / 2;
      return database;
    },
    { refreshMs: 30_000, toleranceMs: 25 },
    () => node.now,
  );
  return { node, offset, setAhead: (ms) => (ahead = ms) };
}

describe('ClockOffset: due times in the database clock', () => {
  it('translates node times to database times and back, measured at the middle of the round trip', async () => {
    const { offset } = clocks(5_000, 40);
    await offset.measure();
    expect(offset.currentMs).toBe(5_000);
    expect(offset.toDatabase(2_000_000)).toBe(2_005_000);
    expect(offset.toNode(2_005_000)).toBe(2_000_000);
  });

  it('keeps the offset through small jitter, so two calls agree on a due time, and follows a real change', async () => {
    const { offset, setAhead } = clocks(-3_000);
    await offset.measure();
    setAhead(-3_010);
    await offset.measure();
    expect(offset.currentMs).toBe(-3_000);
    setAhead(-2_000);
    await offset.measure();
    expect(offset.currentMs).toBe(-2_000);
  });

  it('measures again in the background once the last measurement is older than the refresh interval', async () => {
    const { node, offset, setAhead } = clocks(0);
    await offset.measure();
    setAhead(1_000);
    node.now += 10_000;
    offset.toDatabase(node.now);
    await new Promise((resolve) => setImmediate(resolve));
    expect(offset.currentMs).toBe(0); // not stale yet
    node.now += 30_000;
    offset.toDatabase(node.now);
    await new Promise((resolve) => setImmediate(resolve));
    expect(offset.currentMs).toBe(1_000);
  });
});
