import pg from 'pg';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { readEventStream, type StreamMessage } from '../../../src/commands/event-stream-client.js';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import type { NewEvent } from '../../../src/store/event-store.js';
import type { StreamPosition } from '../../../src/store/new-event-store.js';
import { postSigned } from '../../helpers/http.js';
import { createTestDatabase, describeWithPostgres, TEST_DATABASE_URL, TEST_POOL, type TestDatabase } from '../../helpers/postgres.js';
import { startTestReceiver, TEST_SECRET, type TestReceiver } from '../../helpers/receiver.js';
import { eventually } from '../../helpers/rules.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';

let database: TestDatabase;
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});
afterAll(() => removeTempDirs());

async function node(url: string, settings: Partial<typeof TEST_POOL> = {}): Promise<PostgresStore> {
  const store = await PostgresStore.open({ url, ...TEST_POOL, ...settings });
  cleanup.push(() => store.close());
  return store;
}

function event(transferId: string): NewEvent {
  return {
    source: 'checkout', event: 'transfer:succeeded', transferId, checkoutId: null, email: null, walletAddress: null, validation: 'valid',
    receivedAt: Date.now(), headers: {}, body: Buffer.from(`{"result":{"id":"${transferId}"}}`),
  };
}

/** Reads until nothing more is there or held back (other transactions on the server may hold events back a while). */
async function readAll(store: PostgresStore, from: StreamPosition): Promise<{ ids: number[]; position: StreamPosition }> {
  const ids: number[] = [];
  let position = from;
  const deadline = Date.now() + 20_000;
  for (;;) {
    const read = await store.readNewEvents({}, position, 100, false);
    ids.push(...read.events.map((e) => e.id));
    position = read.position;
    if (read.events.length < 100 && (!read.heldBack || Date.now() > deadline)) return { ids, position };
    if (read.events.length < 100) await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describeWithPostgres('event streams on PostgreSQL', () => {
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('never skips an event whose transaction took a lower id and committed later, nor reads one twice', async () => {
    const url = await database.freshSchemaUrl();
    const store = await node(url);
    const start = await store.streamPosition({ now: true });
    // A second connection holds a transaction open with the lower id while the store commits a higher one.
    const late = new pg.Client({ connectionString: url });
    await late.connect();
    cleanup.push(() => late.end());
    await late.query('BEGIN');
    const lateId = (await late.query<{ id: string }>(
      `INSERT INTO events (source, event, transfer_id, validation, received_at, last_received_at, headers, body)
       VALUES ('checkout', 'transfer:succeeded', 'late', 'valid', $1, $1, '{}', '\\x7b7d') RETURNING id`, [Date.now()],
    )).rows[0]!.id;
    const early = await store.saveEvent(event('early'));
    expect(early.id).toBeGreaterThan(Number(lateId));

    // The committed event waits behind the open transaction: reading it now would move past the lower id.
    const whileOpen = await store.readNewEvents({}, start, 10, false);
    expect(whileOpen.events).toEqual([]);
    expect(whileOpen.heldBack).toBe(true);

    await late.query('COMMIT');
    const after = await readAll(store, whileOpen.position);
    expect(after.ids).toEqual([Number(lateId), early.id]);
    const again = await store.readNewEvents({}, after.position, 10, false);
    expect(again.events).toEqual([]);
    // A client that resumes after the late event (its Last-Event-ID) gets the rest, once.
    expect((await readAll(store, await store.streamPosition({ afterEventId: Number(lateId) }))).ids).toEqual([early.id]);
  });

  it('a transaction open in another database of the server holds no stream back', async () => {
    const store = await node(await database.freshSchemaUrl());
    const start = await store.streamPosition({ now: true });
    // Another application's long transaction, with a lower id than the event's.
    const other = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await other.connect();
    cleanup.push(() => other.end());
    await other.query('BEGIN');
    const otherId = BigInt((await other.query<{ id: string }>('SELECT pg_current_xact_id()::text AS id')).rows[0]!.id);
    const saved = await store.saveEvent(event('beside-another-database'));
    const read = await store.readNewEvents({}, start, 10, false);
    expect(read.events.map((e) => e.id)).toEqual([saved.id]);
    expect(read.heldBack).toBe(false);
    expect(BigInt(read.position.tx!)).toBeGreaterThan(otherId);
    await other.query('COMMIT');
  });

  it('wakes the event readers of every node, by notification, or by polling when notifications are off', async () => {
    const url = await database.freshSchemaUrl();
    const writer = await node(url);
    const notified = await node(url);
    const polling = await node(url, { notifications: false });
    let woken = { notified: 0, polling: 0 };
    const stopNotified = notified.onEventsStored(() => (woken.notified += 1));
    const stopPolling = polling.onEventsStored(() => (woken.polling += 1));
    cleanup.push(async () => {
      stopNotified();
      stopPolling();
    });
    woken = { notified: 0, polling: 0 };
    await writer.saveEvent(event('one'));
    await eventually(() => woken.notified > 0 && woken.polling > 0, 10_000, 'both nodes woken');
    // A repeat stores nothing new and announces nothing.
    const before = woken.notified;
    await writer.saveEvent(event('one'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(woken.notified).toBe(before);
  });

  it('streams every node\'s events from any node, in full and once, over the admin API', async () => {
    const url = await database.freshSchemaUrl();
    const settings = { delivery: { enabled: false }, database: { ...TEST_POOL, url }, admin: { streams: { heartbeatMs: 600_000 } } };
    const nodes: TestReceiver[] = [];
    for (let i = 0; i < 2; i += 1) {
      const started = await startTestReceiver(settings);
      cleanup.push(() => started.close());
      nodes.push(started);
    }
    const [a, b] = nodes as [TestReceiver, TestReceiver];
    const messages: StreamMessage[] = [];
    const controller = new AbortController();
    const reading = (async () => {
      try {
        for await (const message of readEventStream({ url: `${b.adminUrl}/admin/api/events/stream`, token: b.adminToken, signal: controller.signal })) messages.push(message);
      } catch (err) {
        if (!controller.signal.aborted) throw err;
      }
    })();
    cleanup.push(async () => {
      controller.abort();
      await reading;
    });
    await eventually(() => messages.some((m) => m.event === 'ready'), 20_000, 'the stream to open');
    const streamed = (): number[] => messages.filter((m) => m.event === 'event').map((m) => Number(m.id));
    // Received by the other node only: its NOTIFY wakes this node's stream.
    const fromA = (await postSigned(a.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET)).json.id as number;
    await eventually(() => streamed().includes(fromA), 20_000, 'the other node\'s event on the stream');
    // Both nodes receive at once: their group commits interleave, their ids do not commit in order.
    const replies = await Promise.all(Array.from({ length: 60 }, (_, i) => postSigned((i % 2 === 0 ? a : b).webhookUrl(), sampleTransferSucceeded(), TEST_SECRET)));
    const stored = [fromA, ...replies.map((reply) => reply.json.id as number)].sort((x, y) => x - y);
    await eventually(() => streamed().length >= 61, 30_000, '61 events on the stream');
    await new Promise((resolve) => setTimeout(resolve, 300)); // time for a duplicate to show, were there one
    expect([...streamed()].sort((x, y) => x - y)).toEqual(stored);
  }, 120_000);
});
