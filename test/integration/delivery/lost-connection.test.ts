import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, afterEach, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import type { DeliveryDetail } from '../../../src/store/outbox-store.js';
import { describeEachBackend } from '../../helpers/backends.js';
import { postSigned } from '../../helpers/http.js';
import { startTestReceiver, TEST_SECRET, type TestReceiver } from '../../helpers/receiver.js';
import { eventually, rulesDirWith, TEST_DELIVERY } from '../../helpers/rules.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';

const running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.close()));
});
afterAll(() => removeTempDirs());

const LOST = ['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET'];

interface Destination {
  url: string;
  /** Each request: its delivery id and whether its connection had carried an answer before. */
  requests: { delivery: string; reused: boolean }[];
}

/** A keep-alive HTTP server on 127.0.0.1 that answers 200, or resets the connection when `reset` says so. */
async function startDestination(reset: (reused: boolean) => boolean): Promise<Destination> {
  const served = new WeakSet<Socket>();
  const requests: Destination['requests'] = [];
  const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      const reused = served.has(req.socket);
      requests.push({ delivery: String(req.headers['x-hookrelay-delivery']), reused });
      if (reset(reused)) {
        req.socket.resetAndDestroy();
        return;
      }
      served.add(req.socket);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  running.push({ close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }) });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, requests };
}

const rule = (id: string, url: string, schedule: string) => `id: ${id}\non: [transfer:succeeded]\nto:\n  url: ${url}\ntimeout: 2s\nretry:\n  schedule: ${schedule}\n`;

async function post(app: TestReceiver): Promise<number> {
  const reply = await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
  expect(reply.status).toBe(200);
  return reply.json.id as number;
}

async function deliveryOf(app: TestReceiver, eventId: number, ruleId: string, ready: (d: DeliveryDetail) => boolean, what: string): Promise<DeliveryDetail> {
  return eventually(async () => {
    const listed = (await app.store.listDeliveries({ eventId, ruleId }, { limit: 1 })).items[0];
    const detail = listed ? await app.store.getDelivery(listed.id) : null;
    return detail && ready(detail) ? detail : null;
  }, 15_000, what);
}

const logOf = (d: DeliveryDetail) => d.attemptLog.map((a) => [a.status, a.errorCode === null ? null : LOST.includes(a.errorCode) ? 'lost' : a.errorCode, a.outcome]);

describeEachBackend('a connection lost before any answer', (backend) => {
  it('on a kept-alive connection the destination closes: recorded, sent again at once on a new one, not counted by the circuit', async () => {
    // The race of a destination closing an idle connection as the next request arrives, made certain.
    const destination = await startDestination((reused) => reused);
    // A one-hour second step, and a circuit that opens on one counted failure: only an attempt at once,
    // outside the schedule and the circuit, delivers within the test's time.
    const app = await startTestReceiver({
      ...(await backend.storage()),
      rulesDir: rulesDirWith({ 'keepalive.yaml': rule('keepalive', destination.url, '[0s, 1h]') }),
      delivery: { ...TEST_DELIVERY, failureThreshold: 1 },
    });
    running.push(app);

    const first = await post(app);
    await deliveryOf(app, first, 'keepalive', (d) => d.state === 'delivered', 'the first delivery delivered');
    const second = await post(app);
    const delivered = await deliveryOf(app, second, 'keepalive', (d) => d.state === 'delivered', 'the second delivery delivered');

    expect(logOf(delivered)).toEqual([[null, 'lost', 'pending'], [200, null, 'delivered']]);
    expect(delivered).toMatchObject({ attempts: 2, passOffset: 1 });
    // Every request the destination saw is in the attempt log: the reset one on the reused connection, then a new one.
    expect(destination.requests.filter((r) => r.delivery === `dlv_${delivered.id}`).map((r) => r.reused)).toEqual([true, false]);
  });

  it('on every connection: once at once, then the schedule; and never twice where the schedule has one attempt', async () => {
    const destination = await startDestination(() => true);
    const app = await startTestReceiver({
      ...(await backend.storage()),
      rulesDir: rulesDirWith({
        'twice.yaml': rule('twice', destination.url, '[0s, 1h]'),
        'once.yaml': rule('once', destination.url, '[0s]'),
      }),
      delivery: { ...TEST_DELIVERY, failureThreshold: 1_000 },
    });
    running.push(app);

    const eventId = await post(app);
    const waiting = await deliveryOf(app, eventId, 'twice', (d) => d.attempts === 2, 'two attempts of the two-step rule');
    expect(logOf(waiting)).toEqual([[null, 'lost', 'pending'], [null, 'lost', 'pending']]);
    // The second failure takes the schedule's second step: an hour, not another attempt at once.
    expect(waiting).toMatchObject({ state: 'pending', passOffset: 1 });
    expect(waiting.nextAttemptAt! - Date.now()).toBeGreaterThan(30 * 60_000);

    const once = await deliveryOf(app, eventId, 'once', (d) => d.state === 'dead', 'the one-attempt rule dead');
    expect(logOf(once)).toEqual([[null, 'lost', 'dead']]);
    expect(once.deadReason).toContain('retries exhausted after 1 attempts');
    expect(destination.requests.filter((r) => r.delivery === `dlv_${once.id}`)).toHaveLength(1);
  });
});
