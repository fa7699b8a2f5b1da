import { describe, expect, it } from 'vitest';
import { OnDemandThread } from '../../../src/delivery/thread/on-demand-thread.js';
import { createLogger } from '../../../src/log.js';

/** Stands in for DeliveryThread: records calls; `start` resolves when the test says so. */
function threadStandIn() {
  const calls: string[] = [];
  let finishStart: () => void = () => undefined;
  return {
    calls,
    finishStart: () => finishStart(),
    thread: {
      state: 'thread' as const,
      activeAttempts: 0,
      start(options?: { retry?: boolean }) {
        calls.push(`start retry=${options?.retry ?? false}`);
        return new Promise<void>((resolve) => {
          finishStart = () => {
            calls.push('started');
            resolve();
          };
        });
      },
      async stop() {
        calls.push('stop');
      },
      wake: () => calls.push('wake'),
      destinations: async () => ({ adaptive: true, destinations: [] }),
    },
  };
}

const store = (nextDueAt: () => Promise<number | null>) => ({ nextDueAt, listOutages: async () => [] });
const logger = createLogger('silent');

describe('the delivery thread started on demand', () => {
  it('stays idle without work, starts on the first wake, and passes later wakes on', async () => {
    const standIn = threadStandIn();
    const runner = new OnDemandThread(standIn.thread, { store: store(async () => null), pollIntervalMs: 60_000, logger });
    await runner.start();
    expect(runner.state).toBe('idle');
    runner.wake();
    expect(standIn.calls).toEqual(['start retry=true']);
    standIn.finishStart();
    await Promise.resolve();
    runner.wake();
    expect(standIn.calls).toEqual(['start retry=true', 'started', 'wake']);
    expect(runner.state).toBe('thread');
  });

  it('starts the thread at start, failing the start with it, when the store cannot say whether there is work', async () => {
    const standIn = threadStandIn();
    const runner = new OnDemandThread(standIn.thread, { store: store(() => Promise.reject(new Error('database down'))), pollIntervalMs: 60_000, logger });
    const started = runner.start();
    await new Promise((resolve) => setImmediate(resolve));
    expect(standIn.calls).toEqual(['start retry=false']);
    standIn.finishStart();
    await started;
  });

  it('starts nothing when the node stops while its poll waits for the store', async () => {
    const standIn = threadStandIn();
    let answer: (due: number | null) => void = () => undefined;
    let asked = 0;
    const nextDueAt = () => (++asked === 1 ? Promise.resolve(null) : new Promise<number | null>((resolve) => (answer = resolve)));
    const runner = new OnDemandThread(standIn.thread, { store: store(nextDueAt), pollIntervalMs: 5, logger });
    await runner.start();
    while (asked < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    const stopped = runner.stop(0);
    answer(Date.now());
    await stopped;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(standIn.calls).toEqual(['stop']);
  });

  it('on stop, waits for a start under way before stopping the thread, so none is left running', async () => {
    const standIn = threadStandIn();
    const runner = new OnDemandThread(standIn.thread, { store: store(async () => null), pollIntervalMs: 60_000, logger });
    await runner.start();
    runner.wake();
    const stopped = runner.stop(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(standIn.calls).toEqual(['start retry=true']);
    standIn.finishStart();
    await stopped;
    expect(standIn.calls).toEqual(['start retry=true', 'started', 'stop']);
    runner.wake();
    expect(standIn.calls).toHaveLength(3);
  });
});
