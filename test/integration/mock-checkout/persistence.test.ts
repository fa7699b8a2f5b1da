import { join } from 'node:path';
import Database from '../../../src/sqlite-driver.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMockCheckout } from '../../../src/mock-checkout/index.js';
import { SAMPLE_CHECKOUT, startMock, tempDir } from './support/mock-harness.js';
import { startWebhookSink, type WebhookSink } from '../../helpers/webhook-sink.js';

let dir: ReturnType<typeof tempDir>;
let sink: WebhookSink;

beforeEach(async () => {
  dir = tempDir();
  sink = await startWebhookSink();
});
afterEach(async () => {
  await sink.close();
  dir.cleanup();
});

describe('SQLite persistence', () => {
  it('keeps checkouts, transfers, deliveries and a used one-time link across a restart on the same file', async () => {
    const file = join(dir.path, 'mock.sqlite');

    const first = await startMock({ db: file });
    const created = await first.call('POST', '/api/v1/checkout', { ...SAMPLE_CHECKOUT, webhookUrls: [sink.url], oneTimeLink: true });
    const reusable = await first.call('POST', '/api/v1/checkout', { ...SAMPLE_CHECKOUT, collectionTitle: 'Reusable' });
    const id = created.json.result.id as string;
    const purchase = await first.call('POST', `/mock/checkout/${id}/purchase`, { quantity: 2 });
    expect(purchase.status).toBe(200);
    await first.close();

    const second = await startMock({ db: file });
    try {
      expect((await second.call('GET', `/api/v1/checkout/${id}`)).json.result).toEqual(created.json.result);
      const list = await second.call('GET', '/api/v1/checkout');
      expect(list.json.result.map((c: { id: string }) => c.id)).toEqual([reusable.json.result.id, id]);
      expect((await second.call('GET', `/mock/checkout/${id}/transfers`)).json.result).toEqual([purchase.json.transfer]);
      expect((await second.call('GET', `/mock/checkout/${id}/deliveries`)).json.result).toEqual(purchase.json.deliveries);
      expect((await second.call('POST', `/mock/checkout/${id}/purchase`, {})).status).toBe(410);

      // Token ids keep counting from what the first instance sold.
      const next = await second.call('POST', `/mock/checkout/${reusable.json.result.id}/purchase`, { quantity: 1 });
      expect(next.json.transfer.claimedTokens.tokenIds).toEqual(['1']);
      expect(second.mock.state.transferStats(id)).toEqual({ count: 1, tokensSold: 2 });

      await second.call('DELETE', `/api/v1/checkout/${id}`);
      expect(second.mock.state.listDeliveries(id)).toEqual([]);
      expect(second.mock.state.listTransfers(id)).toEqual([]);
    } finally {
      await second.close();
    }
    expect(sink.received).toHaveLength(1);
  });

  it('refuses a database file written by a newer schema version', () => {
    const file = join(dir.path, 'newer.sqlite');
    const db = new Database(file);
    db.pragma('user_version = 99');
    db.close();
    expect(() => createMockCheckout({ db: file })).toThrow(/schema version 99/);
  });
});
