import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../../src/config.js';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { SchemaLearner } from '../../../src/schema/schema-learner.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';

afterAll(() => removeTempDirs());

async function storeEvents(store: SqliteStore, count: number): Promise<void> {
  await Promise.all(Array.from({ length: count }, () => {
    const body = sampleTransferSucceeded();
    return store.saveEvent({ source: 'checkout', event: body.event, transferId: body.result.id, checkoutId: null, email: null, walletAddress: null, validation: 'valid', receivedAt: Date.now(), headers: {}, body: Buffer.from(JSON.stringify(body)) });
  }));
}

/** Learns 120 events stored after the learner took its position, pass by pass; the learned count of each pass. */
async function passes(maxPassMs: number): Promise<{ learned: number; behind: boolean }[]> {
  const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
  const settings = { ...ConfigSchema.parse({}).schema, batchSize: 50, maxPassMs };
  const learner = new SchemaLearner({ store, settings, logger: pino({ level: 'silent' }), leaseHolder: 'node-a' });
  try {
    await learner.runOnce(); // takes the position: the events stored next are new to it
    await storeEvents(store, 120);
    const reports: { learned: number; behind: boolean }[] = [];
    for (let pass = 0; pass < 5; pass += 1) {
      const { learned, behind } = await learner.runOnce();
      reports.push({ learned, behind });
      if (!behind) break;
    }
    return reports;
  } finally {
    await learner.stop();
    await store.close();
  }
}

describe('a schema learner pass', () => {
  it('learns what is new in one pass when its slice allows', async () => {
    expect(await passes(60_000)).toEqual([{ learned: 120, behind: false }]);
  });

  it('stops after the batch that used up schema.maxPassMs, reporting itself behind, and the next passes carry on', async () => {
    // A slice shorter than any batch takes: each pass learns one batch of 50.
    expect(await passes(0.000_001)).toEqual([
      { learned: 50, behind: true },
      { learned: 50, behind: true },
      { learned: 20, behind: false },
    ]);
  });
});
