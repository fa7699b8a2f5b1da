import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.js';
import { StopList } from '../../../src/start/stop-list.js';

function recordingLogger(): { logger: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  const logger = createLogger('error', new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } }));
  return { logger, lines };
}

describe('StopList', () => {
  it('stops the parts in reverse order of adding, each once', async () => {
    const stopped: string[] = [];
    const stops = new StopList({ logger: recordingLogger().logger, timeoutMs: 1_000 });
    stops.add('store', () => void stopped.push('store'));
    stops.add('rules', async () => {
      await Promise.resolve();
      stopped.push('rules');
    });
    stops.add('server', () => void stopped.push('server'));
    expect(await stops.stop()).toEqual([]);
    expect(await stops.stop()).toEqual([]);
    expect(stopped).toEqual(['server', 'rules', 'store']);
  });

  it('stops the rest when one part fails, logs it and names it', async () => {
    const stopped: string[] = [];
    const { logger, lines } = recordingLogger();
    const stops = new StopList({ logger, timeoutMs: 1_000 });
    stops.add('store', () => void stopped.push('store'));
    stops.add('jobs', () => Promise.reject(new Error('jobs table locked')));
    stops.add('sync thrower', () => {
      throw new Error('thrown at once');
    });
    stops.add('server', () => void stopped.push('server'));
    expect(await stops.stop()).toEqual(['sync thrower', 'jobs']);
    expect(stopped).toEqual(['server', 'store']);
    expect(lines.join('')).toContain('jobs table locked');
    expect(lines.join('')).toContain('shutdown: jobs did not stop cleanly');
  });

  it('goes on without a part that outlasts its time', async () => {
    const stopped: string[] = [];
    const { logger, lines } = recordingLogger();
    const stops = new StopList({ logger, timeoutMs: 1_000 });
    stops.add('store', () => void stopped.push('store'));
    stops.add('stuck', () => new Promise<void>(() => undefined), 20);
    expect(await stops.stop()).toEqual(['stuck']);
    expect(stopped).toEqual(['store']);
    expect(lines.join('')).toContain('stuck did not stop within 20 ms');
  });
});
