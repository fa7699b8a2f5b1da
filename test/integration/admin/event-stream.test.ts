import { randomUUID } from 'node:crypto';
import { get, type IncomingMessage } from 'node:http';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { readEventStream, type StreamMessage } from '../../../src/commands/event-stream-client.js';
import type { ImportedEvent } from '../../../src/store/event-archive.js';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { postSigned, send } from '../../helpers/http.js';
import { startTestReceiver, TEST_SECRET, type TestReceiver } from '../../helpers/receiver.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';

const running: TestReceiver[] = [];
afterEach(async () => {
  for (const app of running.splice(0)) await app.close();
});
afterAll(() => removeTempDirs());

async function start(overrides: Record<string, unknown> = {}): Promise<TestReceiver> {
  const app = await startTestReceiver({ delivery: { enabled: false }, ...overrides });
  running.push(app);
  return app;
}

async function ingest(app: TestReceiver, body: unknown = sampleTransferSucceeded()): Promise<number> {
  const reply = await postSigned(app.webhookUrl(), body, TEST_SECRET);
  expect(reply.status).toBe(200);
  return reply.json.id as number;
}

/** Retries the assertion until it holds or the time is up (then its failure is the test's). */
async function waitFor(assertion: () => void, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      assertion();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

/** An open stream and the messages it has received so far. */
function follow(app: TestReceiver, query = '', lastEventId?: string) {
  const messages: StreamMessage[] = [];
  const controller = new AbortController();
  const done = (async () => {
    try {
      for await (const message of readEventStream({ url: `${app.adminUrl}/admin/api/events/stream${query}`, token: app.adminToken, lastEventId, signal: controller.signal })) {
        messages.push(message);
      }
    } catch (err) {
      if (!controller.signal.aborted) throw err;
    }
  })();
  return {
    messages,
    events: () => messages.filter((m) => m.event === 'event').map((m) => JSON.parse(m.data) as Record<string, any>),
    ids: () => messages.filter((m) => m.event === 'event').map((m) => Number(m.id)),
    done,
    stop: async () => {
      controller.abort();
      await done;
    },
  };
}

/** The server has opened the stream(s). */
async function streamsOpen(app: TestReceiver, count: number): Promise<void> {
  await waitFor(() => expect(app.eventStreams.stats().open).toBe(count));
}

function importedEvent(bodyBytes = 0): ImportedEvent {
  const id = randomUUID();
  const body = Buffer.from(JSON.stringify({ event: 'order:archived', result: { id, padding: 'x'.repeat(bodyBytes) } }));
  const at = Date.now();
  return {
    source: 'checkout', event: 'order:archived', transferId: id, checkoutId: null, email: null, walletAddress: null,
    validation: 'unrecognised', receivedAt: at, lastReceivedAt: at, receivedCount: 1, headers: { 'content-type': 'application/json' }, body,
  };
}

describe('GET /admin/api/events/stream', () => {
  it('sends each newly stored event once, with its fields; imports marked; repeats not sent', async () => {
    const app = await start();
    const before = await ingest(app);
    const stream = follow(app);
    await streamsOpen(app, 1);
    const checkoutId = randomUUID();
    const body = sampleTransferSucceeded({ checkoutId });
    const id = await ingest(app, body);
    await postSigned(app.webhookUrl(), body, TEST_SECRET); // a repeat: counted on the event, not sent
    await app.store.importEvents([importedEvent()]);
    await waitFor(() => expect(stream.ids()).toHaveLength(2));
    await stream.stop();
    expect(stream.messages[0]).toMatchObject({ event: 'ready', id: String(before), data: JSON.stringify({ lastEventId: String(before) }) });
    expect(stream.ids()[0]).toBe(id);
    expect(stream.ids()).not.toContain(before);
    const [live, imported] = stream.events();
    expect(live).toMatchObject({ id, source: 'checkout', event: 'transfer:succeeded', transferId: body.result.id, checkoutId, validation: 'valid', imported: false, importedAt: null });
    expect(live).not.toHaveProperty('bodyBase64');
    expect(imported).toMatchObject({ event: 'order:archived', validation: 'unrecognised', imported: true });
  });

  it('applies the list filters and sends the exact bytes and headers when asked', async () => {
    const app = await start();
    const checkoutId = randomUUID();
    const stream = follow(app, `?event=transfer:succeeded&checkoutId=${checkoutId}&body=true`);
    await streamsOpen(app, 1);
    await ingest(app, sampleTransferSucceeded());
    await app.store.importEvents([importedEvent()]);
    const wanted = sampleTransferSucceeded({ checkoutId });
    const id = await ingest(app, wanted);
    await waitFor(() => expect(stream.ids()).toEqual([id]));
    await stream.stop();
    const [event] = stream.events();
    expect(Buffer.from(event!.bodyBase64, 'base64').equals(Buffer.from(JSON.stringify(wanted)))).toBe(true);
    expect(event!.headers['x-service-signature']).toMatch(/^[0-9a-f]{64}$/);
  });

  it('reads bodies only for a stream that sends them, fewer at a time, so what it holds while its client waits stays small', async () => {
    const app = await start();
    const limits: number[] = [];
    const bodies = new Set<boolean>();
    const read = app.store.readNewEvents.bind(app.store);
    app.store.readNewEvents = ((filter, after, limit, withBodies) => {
      limits.push(limit);
      bodies.add(withBodies);
      return read(filter, after, limit, withBodies);
    }) as typeof read;
    await app.store.importEvents(Array.from({ length: 30 }, () => importedEvent()));
    for (const query of ['?since=1h', '?since=1h&body=true']) {
      limits.length = 0;
      bodies.clear();
      const stream = follow(app, query);
      await waitFor(() => expect(stream.ids()).toHaveLength(30));
      await stream.stop();
      expect(Math.max(...limits)).toBe(query.includes('body') ? 8 : 50);
      expect([...bodies]).toEqual([query.includes('body')]);
    }
  });

  it('starts from `since` (an event id or a duration) and refuses a bad one', async () => {
    const app = await start();
    const ids = [await ingest(app), await ingest(app), await ingest(app)];
    const fromId = follow(app, `?since=${ids[0]}`);
    const fromDuration = follow(app, '?since=10m');
    await waitFor(() => {
      expect(fromId.ids()).toEqual(ids.slice(1));
      expect(fromDuration.ids()).toEqual(ids);
    });
    await Promise.all([fromId.stop(), fromDuration.stop()]);
    const bad = await send(`${app.adminUrl}/admin/api/events/stream?since=yesterday`, { headers: { authorization: `Bearer ${app.adminToken}` } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('bad_request');
  });

  it('resumes with Last-Event-ID across a server restart with no gap and no duplicate', async () => {
    const dataDir = makeTempDir();
    const first = await start({ dataDir });
    const before = follow(first);
    await streamsOpen(first, 1);
    const sent = [await ingest(first), await ingest(first), await ingest(first)];
    await waitFor(() => expect(before.ids()).toEqual(sent));
    await first.close();
    await before.done; // the server ended the stream with a final message
    expect(before.messages.at(-1)).toMatchObject({ event: 'end' });
    expect(JSON.parse(before.messages.at(-1)!.data)).toMatchObject({ code: 'shutting_down', lastEventId: String(sent[2]) });
    running.splice(0);

    const second = await start({ dataDir });
    // Stored while no client was connected: the resumed stream must start with these.
    sent.push(await ingest(second), await ingest(second));
    const after = follow(second, '', String(before.ids().at(-1)));
    await streamsOpen(second, 1);
    sent.push(await ingest(second));
    await waitFor(() => expect(after.ids()).toHaveLength(3));
    await after.stop();
    expect([...before.ids(), ...after.ids()]).toEqual(sent);
  });

  it('cuts off a client that stops reading, with its buffer bounded, and says where to resume', async () => {
    const bufferBytes = 64 * 1024;
    const app = await start({ admin: { streams: { bufferBytes, stallTimeoutMs: 300 } } });
    let response!: IncomingMessage;
    const opened = new Promise<void>((resolve) => {
      get(`${app.adminUrl}/admin/api/events/stream?body=true`, { headers: { authorization: `Bearer ${app.adminToken}` } }, (res) => {
        response = res;
        res.pause(); // a client that stops reading: the socket buffers fill and stay full
        resolve();
      });
    });
    await opened;
    await streamsOpen(app, 1);
    // 40 MB of events: far more than the socket buffers on both sides hold.
    for (let i = 0; i < 20; i += 1) await app.store.importEvents(Array.from({ length: 10 }, () => importedEvent(200_000)));
    await waitFor(() => expect(app.eventStreams.stats()).toMatchObject({ open: 0, cutOff: 1 }), 20_000);
    const { peakBufferedBytes } = app.eventStreams.stats();
    // At most the buffer limit plus one message (an event of ~270 KB as base64) and the final message.
    expect(peakBufferedBytes).toBeGreaterThan(0);
    expect(peakBufferedBytes).toBeLessThan(bufferBytes + 300_000);

    // What the client finds when it reads again: contiguous events, then the final message.
    response.setEncoding('utf8');
    let text = '';
    response.on('data', (chunk: string) => (text += chunk));
    response.resume();
    await new Promise((resolve) => response.once('end', resolve));
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    const final = /event: end\ndata: (.*)\n/.exec(text);
    expect(final).not.toBeNull();
    const end = JSON.parse(final![1]!);
    expect(end).toMatchObject({ code: 'stream_overflow', lastEventId: String(ids.at(-1)) });
    expect(ids.length).toBeLessThan(200);
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => ids[0]! + i));
  });

  it('caps open streams and needs the admin token', async () => {
    const app = await start({ admin: { streams: { max: 1 } } });
    const first = follow(app);
    await streamsOpen(app, 1);
    const refused = await send(`${app.adminUrl}/admin/api/events/stream`, { headers: { authorization: `Bearer ${app.adminToken}` } });
    expect(refused.status).toBe(503);
    expect(refused.json.error.code).toBe('too_many_streams');
    await first.stop();
    await streamsOpen(app, 0);
    const anonymous = await send(`${app.adminUrl}/admin/api/events/stream`);
    expect(anonymous.status).toBe(401);
  });
});
