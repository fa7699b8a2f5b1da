import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { createLogger } from '../../../../src/log.js';
import { createMockCheckout, type MockCheckout, type MockCheckoutOptions } from '../../../../src/mock-checkout/index.js';
import { startWebhookSink, type WebhookSink } from '../../../helpers/webhook-sink.js';
import { SAMPLE_CHECKOUT } from '../../../helpers/sample-checkout.js';

export const TEST_API_KEY = 'test-api-key-0123456789';

export interface RunningMock {
  mock: MockCheckout;
  url: string;
  /** JSON call with the bearer key (or `auth: null` for none / a string for another header value). */
  call(method: string, path: string, body?: unknown, init?: { auth?: string | null; rawBody?: string; contentType?: string }): Promise<{ status: number; json: any; headers: Headers }>;
  close(): Promise<void>;
}

/** Starts a mock on 127.0.0.1 with quiet logs and fast retries. */
export async function startMock(options: MockCheckoutOptions = {}): Promise<RunningMock> {
  const mock = createMockCheckout({
    apiKey: TEST_API_KEY,
    logger: createLogger('silent'),
    retry: { retries: 2, minTimeout: 10 },
    webhookTimeoutMs: 2000,
    ...options,
  });
  const server = await mock.listen(0, '127.0.0.1');
  return {
    mock,
    url: server.url,
    async call(method, path, body, init = {}) {
      const headers: Record<string, string> = {};
      const auth = init.auth === undefined ? `Bearer ${TEST_API_KEY}` : init.auth;
      if (auth !== null) headers.authorization = auth;
      const payload = init.rawBody ?? (body === undefined ? undefined : JSON.stringify(body));
      if (payload !== undefined) headers['content-type'] = init.contentType ?? 'application/json';
      const response = await fetch(`${server.url}${path}`, { method, headers, body: payload });
      const text = await response.text();
      return { status: response.status, json: text ? JSON.parse(text) : undefined, headers: response.headers };
    },
    close: () => server.close(),
  };
}

/** A mock checkout and a webhook sink, started together; `close` stops both. */
export async function startMockAndSink(): Promise<{ mock: RunningMock; sink: WebhookSink; close(): Promise<void> }> {
  const [mock, sink] = await Promise.all([startMock(), startWebhookSink()]);
  return { mock, sink, close: async () => void (await Promise.all([mock.close(), sink.close()])) };
}

/** A fresh mock checkout and webhook sink for each test of a file, closed after it; `use` receives each pair. */
export function mockAndSinkForEachTest(use: (mock: RunningMock, sink: WebhookSink) => void): void {
  let running: Awaited<ReturnType<typeof startMockAndSink>> | undefined;
  beforeEach(async () => {
    running = await startMockAndSink();
    use(running.mock, running.sink);
  });
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });
}

export { SAMPLE_CHECKOUT };

/** A temporary directory removed by the returned cleanup. */
export function tempDir(): { path: string; cleanup(): void } {
  const path = mkdtempSync(join(tmpdir(), 'hookrelay-mock-'));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}
