import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';
import { hookrelay } from './cli-harness.js';

afterAll(() => removeTempDirs());

describe('deliveries list and events show say why a pending delivery waits (local mode)', { timeout: 60_000 }, () => {
  it('names the attempt of the schedule and when, and an open outage of its destination', async () => {
    const dataDir = makeTempDir();
    const rulesDir = makeTempDir('hookrelay-rules-');
    writeFileSync(join(rulesDir, 'slow.yaml'), 'id: slow\non: [transfer:succeeded]\nto:\n  url: https://hooks.example.com/in\nretry:\n  schedule: [1h, 2h]\n');
    const store = new SqliteStore({ dataDir, durability: 'normal' });
    let eventId: number;
    try {
      const saved = await store.saveEvent({
        source: 'checkout', event: 'transfer:succeeded', transferId: 't-1', checkoutId: null, email: null, walletAddress: null, validation: 'valid',
        receivedAt: Date.now(), headers: {}, body: Buffer.from('{"n":1}'),
        deliveries: [{ ruleId: 'slow', ruleSetHash: 'seeded', body: null, contentType: 'application/json', delayMs: 3_600_000 }],
      });
      eventId = saved.id;
    } finally {
      await store.close();
    }
    const local = ['--data-dir', dataDir, '--rules-dir', rulesDir];
    const list = await hookrelay(['deliveries', 'list', ...local]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout.split('\n')[0]).toMatch(/\sWAITING$/);
    expect(list.stdout).toMatch(/slow\s+pending\s+ingest\s+0\s.*attempt 1 of 2 at \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/m);
    const shown = await hookrelay(['events', 'show', String(eventId), ...local]);
    expect(shown.stdout).toMatch(/^ {6}waiting: attempt 1 of 2 at \S+ \S+: attempt 1 of 2 on the retry schedule \(1h, 2h\)$/m);

    // The server is the one that knows its circuit; the store knows the destination's outage.
    const reopened = new SqliteStore({ dataDir, durability: 'normal' });
    try {
      await reopened.openOutage('https://hooks.example.com', Date.now() - 60_000);
    } finally {
      await reopened.close();
    }
    const failing = await hookrelay(['deliveries', 'list', ...local, '--json']);
    expect(failing.json.items[0].wait).toMatchObject({ reason: 'destination_failing', attempt: { next: 1, of: 2 }, message: expect.stringContaining('https://hooks.example.com has been failing') });
    expect((await hookrelay(['deliveries', 'list', ...local])).stdout).toMatch(/attempt 1 of 2 at \S+ \S+; destination failing$/m);
  });
});
