import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import type { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import type { ImportedEvent } from '../../../src/store/event-archive.js';
import type { NewDelivery } from '../../../src/store/outbox-store.js';
import { postSigned, send } from '../../helpers/http.js';
import { startTestReceiver, TEST_SECRET, type TestReceiver } from '../../helpers/receiver.js';
import { eventually, rulesDirWith, TEST_DELIVERY } from '../../helpers/rules.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';

afterAll(() => removeTempDirs());

const DAY_MS = 24 * 60 * 60 * 1000;

/** A stored event first received `daysAgo` days ago (what retention looks at), with `bodyBytes` of padding. */
function storedEvent(daysAgo: number, bodyBytes = 0): ImportedEvent {
  const at = Date.now() - daysAgo * DAY_MS;
  const body = Buffer.from(JSON.stringify({ event: 'order:archived', result: { id: randomUUID(), padding: 'x'.repeat(bodyBytes) } }));
  return {
    source: 'checkout', event: 'order:archived', transferId: JSON.parse(body.toString()).result.id, checkoutId: null, email: null, walletAddress: null,
    validation: 'unrecognised', receivedAt: at, lastReceivedAt: at, receivedCount: 1, headers: { 'content-type': 'application/json' }, body,
  };
}

/** Stores events as if received here at their `receivedAt` (not as an import, whose age counts from the import). */
async function seed(app: TestReceiver, events: ImportedEvent[]): Promise<void> {
  for (let i = 0; i < events.length; i += 500) await app.store.importEvents(events.slice(i, i + 500), { importedAt: null });
}

function db(app: TestReceiver) {
  return (app.store as unknown as SqliteStore).db;
}

const count = (app: TestReceiver, table: string) => (db(app).prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

const RETENTION = { maxAgeDays: 30, maxEvents: 1_000_000, intervalMs: 3_600_000, batchSize: 50 };

describe('retention', () => {
  it('prunes events older than maxAgeDays with their deliveries and attempts, and keeps younger ones', async () => {
    const app = await startTestReceiver({ retention: RETENTION, delivery: { ...TEST_DELIVERY, enabled: false } });
    try {
      await seed(app, Array.from({ length: 120 }, (_, i) => storedEvent(31 + i / 10)));
      await seed(app, [storedEvent(29), storedEvent(1)]);
      // A finished delivery with an attempt on one old event: both go with it.
      const old = (await app.store.listEvents({}, { limit: 200 })).items.find((e) => e.receivedAt < Date.now() - 31 * DAY_MS)!;
      const [deliveryId] = await app.store.createDeliveries(old.id, [{ ruleId: 'r', ruleSetHash: 'h', body: null, contentType: 'application/json' }], 'replay');
      const [claimed] = await app.store.claimDueDeliveries({ limit: 1, leaseMs: 60_000 });
      await app.store.recordAttempt(claimed!.id, claimed!.leaseToken, { attempt: 1, startedAt: Date.now(), durationMs: 3, urlOrigin: 'http://x', status: 200, errorCode: null, errorMessage: null, responseExcerpt: null, outcome: 'delivered' }, { state: 'delivered' });
      const fresh = await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);

      const report = await app.retention!.runOnce();

      expect(report).toMatchObject({ byAge: 120, byCount: 0, interrupted: false });
      expect(count(app, 'events')).toBe(3);
      expect(await app.store.getEvent(old.id)).toBeNull();
      expect(await app.store.getDelivery(deliveryId!)).toBeNull();
      expect(count(app, 'delivery_attempts')).toBe(0);
      expect((await app.store.getEvent(fresh.json.id))?.transferId).toBeDefined();
      const ages = (await app.store.listEvents({}, { limit: 10 })).items.map((e) => Math.round((Date.now() - e.receivedAt) / DAY_MS));
      expect(ages.sort((a, b) => a - b)).toEqual([0, 1, 29]);
      const metrics = await send(`${app.url}/metrics`);
      expect(metrics.text).toMatch(/^hookrelay_retention_pruned_events_total\{reason="age"\} 120$/m);
    } finally {
      await app.close();
    }
  });

  it('counts an imported event\'s age from its import, not from its old receipt time', async () => {
    const app = await startTestReceiver({ retention: RETENTION, delivery: { ...TEST_DELIVERY, enabled: false } });
    try {
      const importedToday = [storedEvent(400), storedEvent(45)];
      const importedLastWeek = storedEvent(90);
      const importedLongAgo = storedEvent(120);
      await app.store.importEvents(importedToday); // the default: imported now
      await app.store.importEvents([importedLastWeek], { importedAt: Date.now() - 7 * DAY_MS });
      await app.store.importEvents([importedLongAgo], { importedAt: Date.now() - 31 * DAY_MS });
      await seed(app, [storedEvent(31)]); // received here 31 days ago

      const report = await app.retention!.runOnce();

      expect(report).toMatchObject({ byAge: 2, byCount: 0 });
      const kept = await app.store.listEventsForExport({}, 10);
      expect(kept.map((e) => e.transferId).sort()).toEqual([...importedToday, importedLastWeek].map((e) => e.transferId).sort());
      // Still shown with their own receipt time; the import time is beside it.
      const oldest = kept.find((e) => e.transferId === importedToday[0]!.transferId)!;
      expect(oldest.receivedAt).toBe(importedToday[0]!.receivedAt);
      expect(Date.now() - oldest.importedAt!).toBeLessThan(60_000);
    } finally {
      await app.close();
    }
  });

  it('keeps at most maxEvents, pruning the oldest first', async () => {
    const app = await startTestReceiver({ retention: { ...RETENTION, maxEvents: 25, batchSize: 7 } });
    try {
      const events = Array.from({ length: 40 }, (_, i) => storedEvent(20 - i / 4)); // oldest first
      await seed(app, events.slice().reverse()); // stored newest first: the order of ids must not matter
      const report = await app.retention!.runOnce();
      expect(report).toMatchObject({ byAge: 0, byCount: 15 });
      const kept = new Set((await app.store.listEventsForExport({}, 100)).map((e) => e.transferId));
      expect(kept).toEqual(new Set(events.slice(15).map((e) => e.transferId)));
    } finally {
      await app.close();
    }
  });

  it('never prunes an event that still has a pending delivery, and prunes it once delivered', async () => {
    const rulesDir = rulesDirWith({ 'later.yaml': 'id: later\non: [order:archived]\nto:\n  url: http://127.0.0.1:9/hook\n' });
    const app = await startTestReceiver({ rulesDir, retention: { ...RETENTION, maxEvents: 1 }, delivery: { ...TEST_DELIVERY, enabled: false } });
    try {
      const held = storedEvent(60);
      const plain = storedEvent(60);
      await seed(app, [held, plain]);
      const [heldId] = (await app.store.listEventsForExport({ transferId: held.transferId }, 1)).map((e) => e.id);
      const pending: NewDelivery = { ruleId: 'later', ruleSetHash: 'h', body: null, contentType: 'application/json' };
      const [deliveryId] = await app.store.createDeliveries(heldId!, [pending], 'replay');

      const first = await app.retention!.runOnce();
      expect(first.byAge + first.byCount).toBe(1);
      expect((await app.store.getEvent(heldId!))?.transferId).toBe(held.transferId);
      expect(await app.store.getDelivery(deliveryId!)).toMatchObject({ state: 'pending' });

      // Over maxEvents but every remaining event is held: the pass ends instead of spinning.
      const second = await app.retention!.runOnce();
      expect(second).toMatchObject({ byAge: 0, byCount: 0, interrupted: false });

      const [claimed] = await app.store.claimDueDeliveries({ limit: 1, leaseMs: 60_000 });
      await app.store.recordAttempt(claimed!.id, claimed!.leaseToken, { attempt: 1, startedAt: Date.now(), durationMs: 1, urlOrigin: 'http://x', status: 500, errorCode: null, errorMessage: null, responseExcerpt: null, outcome: 'dead' }, { state: 'dead', reason: 'test' });
      expect((await app.retention!.runOnce()).byAge).toBe(1);
      expect(await app.store.getEvent(heldId!)).toBeNull();
    } finally {
      await app.close();
    }
  });

  it('gives the freed space back to the file system (incremental vacuum)', async () => {
    const app = await startTestReceiver({ retention: { ...RETENTION, batchSize: 500 } });
    try {
      expect(db(app).pragma('auto_vacuum', { simple: true })).toBe(2); // INCREMENTAL, chosen at creation
      await seed(app, Array.from({ length: 1500 }, () => storedEvent(45, 8000)));
      const pagesBefore = db(app).pragma('page_count', { simple: true }) as number;
      const report = await app.retention!.runOnce();
      expect(report.byAge).toBe(1500);
      expect(report.freePagesLeft).toBe(0);
      expect(db(app).pragma('freelist_count', { simple: true })).toBe(0);
      const pagesAfter = db(app).pragma('page_count', { simple: true }) as number;
      expect(pagesAfter).toBeLessThan(pagesBefore / 10);
    } finally {
      await app.close();
    }
  });

  it('runs on its own on the configured interval', async () => {
    const app = await startTestReceiver({ retention: { ...RETENTION, intervalMs: 100 } });
    try {
      await seed(app, [storedEvent(40), storedEvent(40)]);
      await eventually(() => count(app, 'events') === 0, 5000, 'the scheduled pass to prune');
      await seed(app, [storedEvent(40)]);
      await eventually(() => count(app, 'events') === 0, 5000, 'the next scheduled pass to prune');
    } finally {
      await app.close();
    }
  });

  it('keeps acknowledging webhooks while it prunes, and loses no acknowledged event younger than the limit', async () => {
    const app = await startTestReceiver({ retention: { ...RETENTION, batchSize: 100 } });
    try {
      await seed(app, Array.from({ length: 6000 }, () => storedEvent(90, 2000)));
      const before = await Promise.all(Array.from({ length: 20 }, () => postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET)));

      let pruning = true;
      const pass = app.retention!.runOnce().finally(() => (pruning = false));
      const acknowledged = new Map<number, string>(before.map((r) => [r.json.id as number, '']));
      const statuses: number[] = [];
      let duringPrune = 0;
      // Ten concurrent senders, posting until the pass is over (and at least 200 events).
      await Promise.all(Array.from({ length: 10 }, async () => {
        while (pruning || statuses.length < 200) {
          const body = sampleTransferSucceeded();
          const reply = await postSigned(app.webhookUrl(), body, TEST_SECRET);
          statuses.push(reply.status);
          if (reply.status === 200) acknowledged.set(reply.json.id, body.result.id);
          if (pruning) duringPrune += 1;
        }
      }));
      const report = await pass;

      expect(report.byAge).toBe(6000);
      expect(duringPrune).toBeGreaterThan(20); // the posts really overlapped the pass
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
      const missing: number[] = [];
      for (const [id, transferId] of acknowledged) {
        const event = await app.store.getEvent(id);
        if (!event || (transferId && event.transferId !== transferId)) missing.push(id);
      }
      expect(missing).toEqual([]);
      expect(count(app, 'events')).toBe(acknowledged.size);
    } finally {
      await app.close();
    }
  });
});
