import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../src/samples/transfer-succeeded.js';
import { postSigned, send, type Reply } from '../helpers/http.js';
import { createTestDatabase, describeWithPostgres, TEST_POOL, type TestDatabase } from '../helpers/postgres.js';
import { startTestReceiver, TEST_SECRET } from '../helpers/receiver.js';
import { eventually, rulesDirWith, TEST_DELIVERY } from '../helpers/rules.js';
import { removeTempDirs } from '../helpers/temp-dir.js';
import { startCountingSink } from './support/counting-sink.js';
import { report, scale, timeLimit } from './support/soak.js';

const running: { close(): Promise<void> }[] = [];
let database: TestDatabase;
afterEach(async () => {
  for (const item of running.splice(0).reverse()) await item.close();
});
afterAll(() => removeTempDirs());

const EVENTS = scale(240, 2_000);
const SENDERS = 12;
const CUTS = scale(4, 20);

interface Sent {
  transferId: string;
  raw: Buffer;
}

function newEvent(): Sent {
  const body = sampleTransferSucceeded();
  return { transferId: body.result.id, raw: Buffer.from(JSON.stringify(body)) };
}

describeWithPostgres('PostgreSQL dropping every connection mid-stream', () => {
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it(
    'answers 503 while it is gone, loses nothing it acknowledged, reconnects by itself and goes on delivering',
    async () => {
      const sink = await startCountingSink();
      running.push(sink);
      const app = await startTestReceiver({
        database: { ...TEST_POOL, poolSize: 4, url: database.url },
        rulesDir: rulesDirWith({ 'all.yaml': `id: all\non: [transfer:succeeded]\nto:\n  url: ${sink.url}\ntimeout: 2s\nretry:\n  schedule: [0s, 100ms, 200ms, 400ms, 800ms]\n` }),
        // A claim whose commit went through while its answer was lost leaves rows leased: a short lease brings them back.
        delivery: { ...TEST_DELIVERY, leaseMs: 3_000 },
        retention: { enabled: false },
      });
      running.push(app);

      // Senders post a stream of events while every connection to the database is cut, several times.
      const events = Array.from({ length: EVENTS }, () => newEvent());
      const replies: (Reply | null)[] = new Array(EVENTS).fill(null);
      let next = 0;
      const senders = Array.from({ length: SENDERS }, async () => {
        while (next < events.length) {
          const i = next++;
          replies[i] = await postSigned(app.webhookUrl(), events[i]!.raw, TEST_SECRET);
        }
      });
      let ended = 0;
      for (let cut = 0; cut < CUTS; cut += 1) {
        await eventually(() => next >= ((cut + 1) * EVENTS) / (CUTS + 1), 30_000, `the stream past cut ${cut + 1}`);
        ended += await database.terminateConnections();
      }
      await Promise.all(senders);
      expect(ended).toBeGreaterThan(0);

      const acknowledged: Sent[] = [];
      const refused: Sent[] = [];
      replies.forEach((reply, i) => {
        if (reply!.status === 200) acknowledged.push(events[i]!);
        else {
          // Only the store's own answer: never a crash, a 500 or a hung request.
          expect(reply!.status, reply!.text).toBe(503);
          expect(reply!.json).toMatchObject({ error: { code: 'store_unavailable', message: expect.any(String), details: { postgres: expect.any(String) } } });
          refused.push(events[i]!);
        }
      });

      // Nothing acknowledged is lost: each is stored once, byte for byte (read on a connection of the test's own).
      const stored = await database.query<{ transfer_id: string; body: Buffer; n: number }>(
        'SELECT transfer_id, (array_agg(body))[1] AS body, count(*)::int AS n FROM events WHERE transfer_id = ANY($1) GROUP BY transfer_id',
        [acknowledged.map((e) => e.transferId)],
      );
      const byTransfer = new Map(stored.map((row) => [row.transfer_id, row]));
      for (const event of acknowledged) {
        const row = byTransfer.get(event.transferId);
        expect(row, `acknowledged ${event.transferId} is missing`).toBeDefined();
        expect(row!.n).toBe(1);
        expect(Buffer.compare(row!.body, event.raw)).toBe(0);
      }

      // The node came back by itself: a refused event sent again is accepted (a duplicate if its commit had
      // gone through after all, when the connection was cut while its COMMIT's answer was on the way).
      for (const event of refused) {
        const reply = await eventually(async () => {
          const r = await postSigned(app.webhookUrl(), event.raw, TEST_SECRET);
          return r.status === 200 ? r : null;
        }, 10_000, 'ingest accepting again');
        expect(reply.json).toMatchObject({ id: expect.any(Number) });
      }
      expect((await send(`${app.url}/readyz`)).status).toBe(200);

      // Delivery goes on: every event reaches the sink, each under one delivery id.
      await eventually(() => events.every((e) => sink.received.some((r) => r.body.equals(e.raw))), 30_000, 'every event at the sink');
      const idsPerBody = new Map<string, Set<string>>();
      for (const r of sink.received) idsPerBody.set(r.bodySha256, (idsPerBody.get(r.bodySha256) ?? new Set()).add(r.deliveryId));
      expect([...idsPerBody.values()].every((ids) => ids.size === 1)).toBe(true);
      report('postgres-faults/terminate', { posts: EVENTS, cuts: CUTS, connectionsEnded: ended, acknowledged: acknowledged.length, refused503: refused.length, lost: 0, duplicateRequests: sink.duplicates().extraRequests });
    },
    timeLimit(120_000, 600_000),
  );
});
