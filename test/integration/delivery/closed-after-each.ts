import { afterEach } from 'vitest';
import { createGuardedDispatcher, type GuardedDispatcherOptions } from '../../../src/delivery/guarded-dispatcher.js';
import { startLoopbackSink, type LoopbackSink, type SinkHandler } from './loopback-sink.js';

/**
 * Sinks and dispatchers that a test opens, closed when the test ends (call once at the top of a test file).
 * A failing test cannot leave a server or connection behind for the next one.
 */
export function closedAfterEach(): {
  sink: (handler: SinkHandler) => Promise<LoopbackSink>;
  guardedDispatcher: (options: GuardedDispatcherOptions) => ReturnType<typeof createGuardedDispatcher>;
} {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
  });
  return {
    sink: async (handler) => {
      const started = await startLoopbackSink(handler);
      cleanups.push(() => started.close());
      return started;
    },
    guardedDispatcher: (options) => {
      const agent = createGuardedDispatcher(options);
      cleanups.push(() => agent.destroy());
      return agent;
    },
  };
}
