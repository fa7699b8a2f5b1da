import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, startServeProcess } from '../helpers/cli-process.js';
import { send } from '../helpers/http.js';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';

afterAll(() => removeTempDirs());

/** The shell blocks of the docs' "Try it" section, as a reader copies them. */
function tryItBlocks(): string[] {
  const doc = readFileSync(new URL('../../docs/mock-checkout.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('## Try it: one purchase into hookrelay'), doc.indexOf('## Run it'));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);
}

/** `export A=1 B=2` lines of a block. */
function exportsOf(block: string): Record<string, string> {
  const pairs = [...block.matchAll(/^export (.+)$/gm)].flatMap((line) => line[1]!.split(' '));
  return Object.fromEntries(pairs.map((pair) => pair.split('=') as [string, string]));
}

/** The JSON of each `-d '…'` in a block, in order. */
function bodiesOf(block: string): unknown[] {
  return [...block.matchAll(/-d '([\s\S]*?)'/g)].map((match) => JSON.parse(match[1]!));
}

describe('docs/mock-checkout.md "Try it"', { timeout: 60_000 }, () => {
  it('works as written: the mock signs with the secret hookrelay expects, and the purchase is stored', async () => {
    const [serveBlock, mockBlock, buyBlock] = tryItBlocks();
    expect(serveBlock).toContain('npx hookrelay serve');
    expect(mockBlock).toContain('npx hookrelay mock-checkout\n');
    expect(mockBlock).not.toMatch(/--webhook-secret|--api-key/); // secrets stay out of argv

    const dataDir = makeTempDir();
    const server = await startServeProcess({ ...exportsOf(serveBlock!), HOOKRELAY_DATA_DIR: dataDir, HOOKRELAY_RULES_DIR: makeTempDir() });
    const mock = runCli(['mock-checkout', '--port', '0'], { env: exportsOf(mockBlock!) });
    try {
      const deadline = Date.now() + 15_000;
      while (!/listening on (\S+)/.test(mock.stdout()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      const mockUrl = /listening on (\S+)/.exec(mock.stdout())![1]!;

      const { HOOKRELAY_MOCK_API_KEY: apiKey } = exportsOf(buyBlock!);
      const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
      const [createBody, purchaseBody] = bodiesOf(buyBlock!);
      // The docs name the default ports; the test's processes listen on free ones.
      const onTestPorts = (text: string) => text.replaceAll('http://127.0.0.1:8080', server.url);
      const created = await send(`${mockUrl}/api/v1/checkout`, { method: 'POST', headers, body: onTestPorts(JSON.stringify(createBody)) });
      expect(created.status).toBe(200);

      const expression = /node -p '([^']+)'/.exec(buyBlock!)![1]!;
      const id = execFileSync(process.execPath, ['-p', expression, created.text], { encoding: 'utf8' }).trim();
      expect(id).toBe(created.json.result.id);

      const bought = await send(`${mockUrl}/mock/checkout/${id}/purchase`, { method: 'POST', headers, body: JSON.stringify(purchaseBody) });
      expect(bought.status).toBe(200);
      expect(bought.json.deliveries).toEqual([expect.objectContaining({ url: `${server.url}/webhooks/checkout`, status: 200, ok: true })]);

      const listed = runCli(['events', 'list', '--data-dir', dataDir, '--json']);
      expect((await listed.exited).code).toBe(0);
      expect(JSON.parse(listed.stdout()).items).toEqual([expect.objectContaining({ event: 'transfer:succeeded', transferId: bought.json.transfer.id })]);

      const onlyWebhookUrls = await send(`${mockUrl}/api/v1/checkout`, { method: 'POST', headers, body: JSON.stringify({ webhookUrls: [`${server.url}/webhooks/checkout`] }) });
      expect(onlyWebhookUrls.status).toBe(422);
      expect(onlyWebhookUrls.json.error.message).toBe('checkout is invalid: contractAddress is required; collectionTitle is required; priceValue is required; priceCurrency is required');
    } finally {
      mock.child.kill('SIGTERM');
      server.child.kill('SIGTERM');
      await Promise.all([mock.exited, server.exited]);
    }
  });
});
