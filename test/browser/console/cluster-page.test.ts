import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithBrowser, launchBrowser, saveScreenshot } from '../../helpers/browser.js';
import type { TestReceiver } from '../../helpers/receiver.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { ADMIN_TOKEN, startConsoleReceiver } from '../../integration/console/console-harness.js';

let browser: Browser;
let receiver: TestReceiver & { rulesDir: string };

beforeAll(async () => {
  [browser, receiver] = await Promise.all([launchBrowser(), startConsoleReceiver([{ id: 'fulfilment', url: 'http://127.0.0.1:9/' }])]);
});

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  removeTempDirs();
});

describeWithBrowser('console: cluster page', () => {
  it('lists the live nodes, marks this one, and warns while another runs other rules and another version', async () => {
    // A second node on the same store, with other rule files and an older version.
    await receiver.store.registerNode({ id: 'node_web2', host: 'web-2', pid: 77, role: 'worker', version: '0.9.0', ruleSetHash: 'feedfacecafe', heartbeatMs: 60_000, startedAt: Date.now() });
    const page = await browser.newPage();
    try {
      await page.goto(`${receiver.url}/console`);
      await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('heading', { name: 'Events' }).waitFor();
      await page.getByRole('link', { name: 'Cluster' }).click();
      await page.getByRole('heading', { name: 'Live nodes (2)' }).waitFor();
      const self = page.locator(`tr[data-node-id="${receiver.node.id}"]`);
      await expect(self.textContent()).resolves.toContain('(this node)');
      await expect(self.textContent()).resolves.toContain(receiver.rules.current().hash);
      const other = page.locator('tr[data-node-id="node_web2"]');
      const otherText = await other.textContent();
      expect(otherText).toContain('web-2');
      expect(otherText).toContain('worker');
      expect(otherText).not.toContain('(this node)');
      const alerts = page.getByRole('alert');
      await expect(alerts.count()).resolves.toBe(2);
      await expect(page.locator('[data-warning="rule_sets_differ"]').textContent()).resolves.toContain('feedfacecafe: node_web2');
      await expect(page.locator('[data-warning="versions_differ"]').textContent()).resolves.toContain('0.9.0: node_web2');
      await saveScreenshot(page, 'console-cluster-warning');
      // The other node stops, and a third one stops heartbeating (killed): the page's next refresh shows one
      // live node, no warning, and says that one left and when, and since when the other is missing.
      await receiver.store.registerNode({ id: 'node_web3', host: 'web-3', pid: 78, role: 'all', version: '1.0.0', ruleSetHash: null, heartbeatMs: 10, startedAt: Date.now() });
      await receiver.store.deregisterNode('node_web2');
      await page.getByRole('heading', { name: 'Live nodes (1)' }).waitFor({ timeout: 20_000 });
      await page.getByRole('heading', { name: 'Gone in the last day (2)' }).waitFor({ timeout: 20_000 });
      await expect(page.getByRole('alert').count()).resolves.toBe(0);
      const left = page.locator('tr[data-gone-node-id="node_web2"]');
      expect(await left.getAttribute('data-state')).toBe('left');
      expect(await left.locator('td[data-label="Gone"]').textContent()).toMatch(/^left left at /);
      const missing = page.locator('tr[data-gone-node-id="node_web3"]');
      expect(await missing.getAttribute('data-state')).toBe('missing');
      expect(await missing.locator('td[data-label="Gone"]').textContent()).toMatch(/^missing missing since /);
      const lastBeat = (await receiver.store.listGoneNodes(10)).find((n) => n.id === 'node_web3')!.since;
      expect(await missing.locator('td[data-label="Gone"] time').getAttribute('datetime')).toBe(new Date(lastBeat).toISOString());
      await saveScreenshot(page, 'console-cluster-gone');
    } finally {
      await page.close();
    }
  });
});
