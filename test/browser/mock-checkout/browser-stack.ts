import type { Browser } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { launchBrowser } from '../../helpers/browser.js';
import type { WebhookSink } from '../../helpers/webhook-sink.js';
import { startMockAndSink, type RunningMock } from '../../integration/mock-checkout/support/mock-harness.js';

export interface BrowserStack {
  browser: Browser;
  mock: RunningMock;
  sink: WebhookSink;
}

/** One browser, mock checkout and webhook sink for all tests of a file; `use` receives them once started. */
export function browserStackForFile(use: (stack: BrowserStack) => void): void {
  let browser: Browser | undefined;
  let mockAndSink: Awaited<ReturnType<typeof startMockAndSink>> | undefined;
  beforeAll(async () => {
    [browser, mockAndSink] = await Promise.all([launchBrowser(), startMockAndSink()]);
    use({ browser, mock: mockAndSink.mock, sink: mockAndSink.sink });
  });
  afterAll(async () => {
    await browser?.close();
    await mockAndSink?.close();
  });
}
