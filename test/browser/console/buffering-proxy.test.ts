import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { describeWithBrowser, launchBrowser } from '../../helpers/browser.js';
import { postSigned } from '../../helpers/http.js';
import { TEST_SECRET, type TestReceiver } from '../../helpers/receiver.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { ADMIN_TOKEN, startConsoleReceiver } from '../../integration/console/console-harness.js';

/** Headers of one connection, not of the message: the proxy's own connections set their own. */
const HOP_BY_HOP = ['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection', 'upgrade'];

function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.includes(name)));
}

interface BufferingProxy {
  url: string;
  /** Status of each upstream response to a stream request, as it arrived. */
  streamStatuses: number[];
  close(): Promise<void>;
}

/**
 * A reverse proxy that buffers responses, as nginx does with `proxy_buffering on` and without honouring
 * `X-Accel-Buffering`: it passes the status and headers on at once but holds the body until the upstream
 * response ends. Harmless for ordinary requests; an event stream never ends, so none of it gets through.
 */
async function startBufferingProxy(upstream: string): Promise<BufferingProxy> {
  const target = new URL(upstream);
  const streamStatuses: number[] = [];
  const server: Server = createServer((req, res) => {
    const forward = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: endToEnd(req.headers) },
      (answer) => {
        if (req.url?.startsWith('/admin/api/events/stream')) streamStatuses.push(answer.statusCode!);
        res.writeHead(answer.statusCode!, endToEnd(answer.headers));
        res.flushHeaders();
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => res.end(Buffer.concat(chunks)));
      },
    );
    forward.on('error', () => res.destroy());
    // A browser that gives up on a response closes its connection: so does the proxy upstream.
    res.on('close', () => forward.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    streamStatuses,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let browser: Browser;
let receiver: TestReceiver & { rulesDir: string };
let proxy: BufferingProxy;

describeWithBrowser('console: events behind a proxy that buffers responses', () => {
  beforeAll(async () => {
    receiver = await startConsoleReceiver([]);
    proxy = await startBufferingProxy(receiver.url);
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await proxy?.close();
    await receiver?.close();
    removeTempDirs();
  });

  it('falls back to polling when the stream opens but none of it arrives', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${proxy.url}/console`);
      await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('heading', { name: 'Events' }).waitFor();
      // The page waits 5 s for the stream's first message before it polls.
      await page.locator('[data-follow="polling"]').waitFor({ timeout: 20_000 });
      // The server did open the stream (it is the proxy that held it back), and the page closed it.
      expect(proxy.streamStatuses).toContain(200);
      await expect.poll(() => receiver.eventStreams.stats().open, { timeout: 10_000 }).toBe(0);

      const reply = await postSigned(receiver.webhookUrl(), sampleTransferSucceeded({ email: 'proxied@example.com' }), TEST_SECRET);
      expect(reply.status, reply.text).toBe(200);
      const id = reply.json.id as number;
      await page.locator(`tbody tr[data-event-id="${id}"]`).waitFor({ timeout: 15_000 });
      expect(await page.locator('tbody tr[data-event-id]').first().getAttribute('data-event-id')).toBe(String(id));
      expect(await page.locator('[data-follow]').getAttribute('data-follow')).toBe('polling');
    } finally {
      await page.close();
    }
  }, 60_000);
});
