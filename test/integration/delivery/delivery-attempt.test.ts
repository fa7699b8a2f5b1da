import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { createCircuitBreaker } from '../../../src/delivery/circuit-breaker.js';
import { classifyAttempt } from '../../../src/delivery/classify-attempt.js';
import { createDestinationLimiter, destinationKey } from '../../../src/delivery/destination-limiter.js';
import { sendAttempt } from '../../../src/delivery/http-sender.js';
import { deliveryHeaders } from '../../../src/signing/delivery-headers.js';
import { nextAttemptDelay } from '../../../src/delivery/retry-schedule.js';
import { createSsrfGuard } from '../../../src/delivery/ssrf-guard.js';
import { verifyHmacSha256Hex } from '../../../src/signing/hmac-sha256-hex.js';
import { closedAfterEach } from './closed-after-each.js';

const { sink, guardedDispatcher } = closedAfterEach();
const agent = () => guardedDispatcher({ guard: createSsrfGuard({ allowNetworks: ['127.0.0.1/32'] }), connectTimeoutMs: 2000 });

const body = '{"event":"transfer:succeeded","result":{"id":"tr_9"}}';

describe('one delivery attempt end to end (sign, send, classify, schedule)', () => {
  it('a standard-webhooks receiver verifies the request; the same id is sent on the retry', async () => {
    const secret = 'whsec_' + Buffer.from('a-test-secret-of-some-length').toString('base64');
    let calls = 0;
    const target = await sink((req, res, received) => {
      calls += 1;
      try {
        new Webhook(secret).verify(received.toString(), req.headers as Record<string, string>);
        res.writeHead(calls === 1 ? 503 : 204).end();
      } catch {
        res.writeHead(401).end('bad signature');
      }
    });
    const dispatcher = agent();
    const attempt = () =>
      sendAttempt({
        url: `${target.origin}/in`,
        headers: deliveryHeaders({ signing: { scheme: 'standard-webhooks', secret }, deliveryId: 'dlv_42', timestamp: new Date(), body }),
        body,
        timeoutMs: 2000,
        dispatcher,
      });

    const first = classifyAttempt({ ...(await attempt()), now: Date.now() });
    expect(first).toEqual({ verdict: 'retryable', reason: 'HTTP 503' });
    expect(nextAttemptDelay({ attemptNumber: 1, scheduleMs: [0, 5000], random: () => 0.5 })).toBe(5000);
    expect(classifyAttempt({ ...(await attempt()), now: Date.now() })).toEqual({ verdict: 'delivered' });
    expect(target.requests.map((r) => r.headers['webhook-id'])).toEqual(['dlv_42', 'dlv_42']);
    expect(target.requests.map((r) => r.headers['x-hookrelay-delivery'])).toEqual(['dlv_42', 'dlv_42']);
  });

  it('an hmac-sha256-hex receiver (the checkout scheme) verifies the request', async () => {
    const target = await sink((req, res, received) => {
      const ok = verifyHmacSha256Hex(['s3cret'], received, String(req.headers['x-service-signature']));
      res.writeHead(ok ? 200 : 401).end();
    });
    const result = await sendAttempt({
      url: target.origin,
      headers: deliveryHeaders({ signing: { scheme: 'hmac-sha256-hex', secret: 's3cret' }, deliveryId: 'dlv_1', timestamp: new Date(), body }),
      body,
      timeoutMs: 2000,
      dispatcher: agent(),
    });
    expect(result.status).toBe(200);
  });
});

describe('per-destination limits under load (bounded, loopback only)', () => {
  it('never has more than the concurrency limit in flight at one destination', async () => {
    let current = 0;
    let peak = 0;
    const target = await sink((_req, res) => {
      current += 1;
      peak = Math.max(peak, current);
      setTimeout(() => {
        current -= 1;
        res.writeHead(200).end();
      }, 5);
    });
    const dispatcher = agent();
    const limiter = createDestinationLimiter();
    const limits = { concurrency: 4 };
    const destination = destinationKey(target.origin);

    // A miniature worker: 200 due rows, each attempted only when a slot is free.
    let remaining = 200;
    let delivered = 0;
    const inFlight = new Set<Promise<void>>();
    while (remaining > 0 || inFlight.size > 0) {
      const release = remaining > 0 ? limiter.tryAcquire(destination, limits) : null;
      if (release) {
        remaining -= 1;
        const run = sendAttempt({ url: target.origin, body, timeoutMs: 5000, dispatcher })
          .then((result) => {
            if (classifyAttempt({ ...result, now: Date.now() }).verdict === 'delivered') delivered += 1;
          })
          .finally(() => {
            release();
            inFlight.delete(run);
          });
        inFlight.add(run);
      } else {
        await Promise.race(inFlight);
      }
    }
    expect(delivered).toBe(200);
    expect(peak).toBeLessThanOrEqual(4);
    expect(peak).toBeGreaterThan(1);
    expect(limiter.inFlight(destination)).toBe(0);
  });

  it('a failing destination trips the circuit breaker after five consecutive failures', async () => {
    const target = await sink((_req, res) => res.writeHead(503).end());
    const dispatcher = agent();
    const breaker = createCircuitBreaker();
    const destination = destinationKey(target.origin);
    let now = 1_000_000;
    let attempts = 0;
    while (!breaker.isOpen(destination, now) && attempts < 20) {
      const outcome = classifyAttempt({ ...(await sendAttempt({ url: target.origin, body, timeoutMs: 2000, dispatcher })), now });
      attempts += 1;
      if (outcome.verdict === 'retryable') breaker.recordFailure(destination, now);
      else breaker.recordSuccess(destination);
      now += 1000;
    }
    expect(attempts).toBe(5);
    expect(breaker.reopensAt(destination, now)).toBe(1_000_000 + 4000 + 30_000);
  });
});
