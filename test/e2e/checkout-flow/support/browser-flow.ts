import type { Browser } from 'playwright-core';
import { launchBrowser } from '../../../helpers/browser.js';
import { allSettledOrThrow, forwardingRule, startMockCheckout, startReceiver, startSink, stopAllProcesses } from './stack.js';

let browser: Browser | undefined;

/**
 * A sink, a receiver with one rule forwarding every purchase to `${sink}/all`, the mock checkout and a
 * browser, started together. Call `stopBrowserFlow` in afterEach: it closes whatever did start.
 */
export async function startBrowserFlow(ruleId: string) {
  const sink = await startSink();
  const [receiver, mock, launched] = await allSettledOrThrow([
    startReceiver({ [`${ruleId}.yaml`]: forwardingRule(ruleId, `${sink.url}/all`) }),
    startMockCheckout(),
    launchBrowser().then((b) => (browser = b)), // kept at once, so a failed start still closes it
  ]);
  return { sink, receiver, mock, browser: launched };
}

export async function stopBrowserFlow(): Promise<void> {
  await browser?.close();
  browser = undefined;
  await stopAllProcesses();
}
