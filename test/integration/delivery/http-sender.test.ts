import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { classifyAttempt } from '../../../src/delivery/classify-attempt.js';
import { sendAttempt } from '../../../src/delivery/http-sender.js';
import { LeasedAttempt } from '../../../src/delivery/lease-keeper.js';
import { createSsrfGuard } from '../../../src/delivery/ssrf-guard.js';
import { USER_AGENT } from '../../../src/delivery/user-agent.js';
import { closedAfterEach } from './closed-after-each.js';

const guard = createSsrfGuard({ allowNetworks: ['127.0.0.1/32'] });
const { sink, guardedDispatcher } = closedAfterEach();
const dispatcher = () => guardedDispatcher({ guard, connectTimeoutMs: 2000 });

const body = '{"event":"transfer:succeeded","result":{"id":"tr_1"}}';

describe('sendAttempt against a loopback sink', () => {
  it('200: returns status, headers and body excerpt; sends body, headers and user agent', async () => {
    const target = await sink((_req, res) => res.writeHead(200, { 'content-type': 'text/plain', 'x-seen': 'yes' }).end('thanks'));
    const result = await sendAttempt({
      url: `${target.origin}/hooks/a?x=1`,
      headers: { 'X-Hookrelay-Delivery': 'dlv_1', 'Content-Length': '999', Host: 'evil.example' },
      body,
      timeoutMs: 2000,
      dispatcher: dispatcher(),
    });
    expect(result).toMatchObject({ status: 200, responseExcerpt: 'thanks', headers: { 'x-seen': 'yes', 'content-type': 'text/plain' } });
    expect(result.error).toBeUndefined();
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    const [received] = target.requests;
    expect(received).toMatchObject({ method: 'POST', path: '/hooks/a?x=1' });
    expect(received!.body.toString()).toBe(body);
    expect(received!.headers).toMatchObject({
      'x-hookrelay-delivery': 'dlv_1',
      'user-agent': USER_AGENT,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      host: `127.0.0.1:${target.port}`,
    });
    expect(USER_AGENT).toMatch(/^hookrelay\/\d+\.\d+\.\d+/);
    expect(classifyAttempt({ ...result, now: Date.now() })).toEqual({ verdict: 'delivered' });
  });

  it('500 → retry', async () => {
    const target = await sink((_req, res) => res.writeHead(500).end('boom'));
    const result = await sendAttempt({ url: target.origin, body, timeoutMs: 2000, dispatcher: dispatcher() });
    expect(result).toMatchObject({ status: 500, responseExcerpt: 'boom' });
    expect(classifyAttempt({ ...result, now: Date.now() })).toEqual({ verdict: 'retryable', reason: 'HTTP 500' });
  });

  it('503 + Retry-After → retry after the given seconds', async () => {
    const target = await sink((_req, res) => res.writeHead(503, { 'retry-after': '42' }).end());
    const result = await sendAttempt({ url: target.origin, body, timeoutMs: 2000, dispatcher: dispatcher() });
    expect(result.status).toBe(503);
    expect(classifyAttempt({ ...result, now: Date.now() })).toEqual({ verdict: 'retryable', reason: 'HTTP 503', retryAfterMs: 42_000 });
  });

  it('429 → retry', async () => {
    const target = await sink((_req, res) => res.writeHead(429).end('slow down'));
    const result = await sendAttempt({ url: target.origin, body, timeoutMs: 2000, dispatcher: dispatcher() });
    expect(classifyAttempt({ ...result, now: Date.now() })).toMatchObject({ verdict: 'retryable', reason: 'HTTP 429' });
  });

  it('404 → dead', async () => {
    const target = await sink((_req, res) => res.writeHead(404).end());
    const result = await sendAttempt({ url: target.origin, body, timeoutMs: 2000, dispatcher: dispatcher() });
    expect(classifyAttempt({ ...result, now: Date.now() })).toEqual({ verdict: 'permanent', reason: 'HTTP 404' });
  });

  it('301 is returned, not followed', async () => {
    const target = await sink((req, res) => {
      if (req.url === '/old') res.writeHead(301, { location: '/new' }).end();
      else res.writeHead(200).end('followed');
    });
    const result = await sendAttempt({ url: `${target.origin}/old`, body, timeoutMs: 2000, dispatcher: dispatcher() });
    expect(result).toMatchObject({ status: 301, headers: { location: '/new' } });
    expect(target.requests.map((r) => r.path)).toEqual(['/old']);
    expect(classifyAttempt({ ...result, now: Date.now() })).toMatchObject({ verdict: 'permanent' });
  });

  it('a receiver that never answers times out within the deadline', async () => {
    const target = await sink(() => {}); // reads the request, never responds
    const result = await sendAttempt({ url: target.origin, body, timeoutMs: 300, dispatcher: dispatcher() });
    expect(result.error).toEqual({ code: 'timeout', message: 'no complete response within 300 ms' });
    expect(result.status).toBeUndefined();
    expect(result.durationMs).toBeGreaterThanOrEqual(250);
    expect(result.durationMs).toBeLessThan(1500);
    expect(classifyAttempt({ ...result, now: Date.now() })).toMatchObject({ verdict: 'retryable' });
  });

  it('a body that stalls halfway times out within the same deadline, keeping status and excerpt', async () => {
    const target = await sink((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial');
    });
    const result = await sendAttempt({ url: target.origin, body, timeoutMs: 300, dispatcher: dispatcher() });
    expect(result).toMatchObject({ status: 200, responseExcerpt: 'partial', error: { code: 'timeout' } });
    expect(result.durationMs).toBeLessThan(1500);
  });

  it('a connection reset is a network error (retry)', async () => {
    const target = await sink((req) => req.socket.resetAndDestroy());
    const result = await sendAttempt({ url: target.origin, body, timeoutMs: 2000, dispatcher: dispatcher() });
    expect(result.status).toBeUndefined();
    expect(result.error?.code).toMatch(/^(ECONNRESET|UND_ERR_SOCKET)$/);
    expect(classifyAttempt({ ...result, now: Date.now() })).toMatchObject({ verdict: 'retryable' });
  });

  it('a connection closed without a response is a network error (retry)', async () => {
    const target = await sink((req) => req.socket.end());
    const result = await sendAttempt({ url: target.origin, body, timeoutMs: 2000, dispatcher: dispatcher() });
    expect(result.status).toBeUndefined();
    expect(result.error?.code).toMatch(/^(UND_ERR_SOCKET|ECONNRESET)$/);
    expect(classifyAttempt({ ...result, now: Date.now() })).toMatchObject({ verdict: 'retryable' });
  });

  it('a 50 MB response: the excerpt is capped and the attempt ends promptly', async () => {
    const total = 50 * 1024 * 1024;
    const target = await sink((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(total) });
      let sent = 0;
      const chunk = Buffer.alloc(64 * 1024, 0x78);
      const source = new Readable({
        read() {
          sent += chunk.length;
          this.push(sent <= total ? chunk : null);
        },
      });
      source.pipe(res);
      res.on('close', () => source.destroy());
    });
    const started = Date.now();
    const agent = dispatcher();
    const result = await sendAttempt({ url: target.origin, body, timeoutMs: 10_000, dispatcher: agent, maxExcerptBytes: 4096 });
    expect(result.status).toBe(200);
    expect(result.error).toBeUndefined();
    expect(Buffer.byteLength(result.responseExcerpt)).toBe(4096);
    expect(Date.now() - started).toBeLessThan(3000);
    // The unread rest closed its connection, not the dispatcher: the next attempt goes through.
    const next = await sendAttempt({ url: target.origin, body, timeoutMs: 10_000, dispatcher: agent, maxExcerptBytes: 16 });
    expect(next).toMatchObject({ status: 200, responseExcerpt: 'x'.repeat(16) });
    expect(target.requests).toHaveLength(2);
  });

  it('a DNS lookup that never answers is bounded by the same deadline, and nothing connects', async () => {
    const hanging = createSsrfGuard({ allowNetworks: ['127.0.0.1/32'], lookup: () => new Promise(() => {}) });
    const agent = guardedDispatcher({ guard: hanging });
    const result = await sendAttempt({ url: 'http://never.test/hook', body, timeoutMs: 200, dispatcher: agent });
    expect(result.error?.code).toBe('timeout');
    expect(result.durationMs).toBeLessThan(1500);
  });

  it('an outside abort (shutdown, a lost lease) ends the attempt as aborted', async () => {
    const target = await sink(() => {});
    const leased = new LeasedAttempt({ id: 1, leaseToken: 't', ruleId: 'r' }, Date.now() + 60_000);
    setTimeout(() => leased.abort(), 100);
    const result = await sendAttempt({ url: target.origin, body, timeoutMs: 5000, dispatcher: dispatcher(), abort: leased });
    expect(result.error?.code).toBe('aborted');
    expect(result.durationMs).toBeLessThan(2000);
    expect(classifyAttempt({ ...result, now: Date.now() })).toMatchObject({ verdict: 'retryable' });
  });

  it('an attempt aborted before it starts sends nothing; one that finished is not touched by a later abort', async () => {
    const target = await sink((_req, res) => res.writeHead(200).end());
    const agent = dispatcher();
    const early = new LeasedAttempt({ id: 2, leaseToken: 't', ruleId: 'r' }, Date.now() + 60_000);
    early.abort();
    const skipped = await sendAttempt({ url: target.origin, body, timeoutMs: 5000, dispatcher: agent, abort: early });
    expect(skipped.error?.code).toBe('aborted');
    const later = new LeasedAttempt({ id: 3, leaseToken: 't', ruleId: 'r' }, Date.now() + 60_000);
    const done = await sendAttempt({ url: target.origin, body, timeoutMs: 5000, dispatcher: agent, abort: later });
    later.abort();
    expect(done.status).toBe(200);
    expect(done.error).toBeUndefined();
    expect(target.requests).toHaveLength(1);
  });

  it('a header value that cannot be sent is reported, not thrown, and nothing is sent', async () => {
    const target = await sink((_req, res) => res.writeHead(200).end());
    const result = await sendAttempt({ url: target.origin, headers: { 'x-split': 'a\r\nb' }, body, timeoutMs: 2000, dispatcher: dispatcher() });
    expect(result.status).toBeUndefined();
    expect(result.error).toEqual({ code: 'UND_ERR_INVALID_ARG', message: 'invalid x-split header' });
    expect(target.requests).toHaveLength(0);
  });

  it('a non-http URL is reported, not thrown', async () => {
    const result = await sendAttempt({ url: 'ftp://127.0.0.1/x', body, timeoutMs: 1000, dispatcher: dispatcher() });
    expect(result.error?.code).toBe('invalid_url');
    expect(classifyAttempt({ ...result, now: Date.now() })).toMatchObject({ verdict: 'permanent' });
  });
});
