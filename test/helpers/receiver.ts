import { Writable } from 'node:stream';
import { loadConfig, type Config } from '../../src/config.js';
import { startHookrelay, type RunningHookrelay, type StartOptions } from '../../src/hookrelay.js';
import { createLogger } from '../../src/log.js';
import { makeTempDir } from './temp-dir.js';

export const TEST_SECRET = 'test-secret-0123456789abcdef';

export interface TestReceiver extends RunningHookrelay {
  dataDir: string;
  webhookUrl: (source?: string) => string;
  /** Every log line written so far, parsed. */
  logLines: () => Record<string, unknown>[];
  /** The raw text of every log line, to grep for leaks. */
  logText: () => string;
}

/**
 * Starts a real receiver on an ephemeral loopback port with a fresh data dir and captured logs. Its delivery
 * worker runs on the event loop (`delivery.thread: false`), where a test can inject DNS answers and reach the
 * outage tracker, unless `delivery.thread` is set; `hookrelay serve` processes run it in its thread.
 */
export async function startTestReceiver(overrides: Partial<Record<keyof Config, unknown>> = {}, options: StartOptions = {}): Promise<TestReceiver> {
  const dataDir = (overrides.dataDir as string | undefined) ?? makeTempDir();
  const config = loadConfig(
    { HOOKRELAY_SECRET: TEST_SECRET },
    { port: 0, host: '127.0.0.1', dataDir, rulesDir: makeTempDir(), logLevel: 'info', ...overrides, delivery: { thread: false, ...(overrides.delivery as object | undefined) } },
  );
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const app = await startHookrelay(config, createLogger(config.logLevel, sink), options);
  return {
    ...app,
    dataDir,
    webhookUrl: (source = 'checkout') => `${app.url}/webhooks/${source}`,
    logLines: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
    logText: () => lines.join('\n'),
  };
}
