import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { postSigned, send } from '../../helpers/http.js';
import { startTestReceiver, TEST_SECRET, type TestReceiver } from '../../helpers/receiver.js';
import { eventually, rulesDirWith, TEST_DELIVERY } from '../../helpers/rules.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { startWebhookSink } from '../../helpers/webhook-sink.js';
import { parseSamples, sampleValue, type Sample } from './prometheus-text.js';

afterAll(() => removeTempDirs());

async function scrape(app: TestReceiver, headers: Record<string, string> = {}): Promise<{ status: number; text: string; samples: Sample[]; contentType: string }> {
  const reply = await send(`${app.url}/metrics`, { headers });
  return { status: reply.status, text: reply.text, samples: reply.status === 200 ? parseSamples(reply.text) : [], contentType: String(reply.headers['content-type']) };
}

const unrecognised = (event: string) => ({ event, result: { id: `r_${Math.random().toString(36).slice(2)}` } });

describe('GET /metrics', () => {
  it('counts ingests by outcome and attempts by rule, shows the outbox and destination limits, and leaks no secret or URL', async () => {
    // The first request to the sink fails with 503 (retried), every later one succeeds.
    const sink = await startWebhookSink((index) => (index === 0 ? 503 : 200));
    const refusing = await startWebhookSink(() => 400);
    const rulesDir = rulesDirWith({
      'forward.yaml': [
        'id: forward',
        'on: [transfer:succeeded]',
        'to:',
        `  url: ${sink.url}?token=url-secret-in-query`,
        '  headers: { x-api-key: "header-secret-value" }',
        'sign: { scheme: hmac-sha256-hex, secret: "rule-signing-secret" }',
        'retry: { schedule: [0s, 0s] }',
        '',
      ].join('\n'),
      'refunds.yaml': `id: refunds\non: [refund:issued]\nto:\n  url: ${refusing.url}\n`,
    });
    const app = await startTestReceiver({ rulesDir, delivery: TEST_DELIVERY });
    try {
      const first = sampleTransferSucceeded();
      expect((await postSigned(app.webhookUrl(), first, TEST_SECRET)).status).toBe(200);
      expect((await postSigned(app.webhookUrl(), first, TEST_SECRET)).json.duplicate).toBe(true);
      expect((await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET)).status).toBe(200);
      expect((await postSigned(app.webhookUrl(), unrecognised('refund:issued'), TEST_SECRET)).status).toBe(200);
      expect((await postSigned(app.webhookUrl(), sampleTransferSucceeded(), 'wrong-secret')).status).toBe(401);
      expect((await postSigned(app.webhookUrl('no-such-source'), sampleTransferSucceeded(), TEST_SECRET)).status).toBe(404);
      expect((await send(app.webhookUrl(), { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' })).status).toBe(415);

      await sink.waitFor(3);
      await refusing.waitFor(1);
      const { status, text, samples, contentType } = await eventually(async () => {
        const s = await scrape(app);
        return sampleValue(s.samples, 'hookrelay_dead_letters') === 1 && sampleValue(s.samples, 'hookrelay_delivery_attempts_total', { rule: 'forward', outcome: 'delivered' }) === 2 ? s : null;
      }, 10_000, 'all attempts to be recorded');
      expect(status).toBe(200);
      expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);

      const received = (labels: Record<string, string>) => sampleValue(samples, 'hookrelay_events_received_total', labels);
      expect(received({ source: 'checkout', event: 'transfer:succeeded', outcome: 'stored' })).toBe(2);
      expect(received({ source: 'checkout', event: 'transfer:succeeded', outcome: 'duplicate' })).toBe(1);
      expect(received({ source: 'checkout', event: 'refund:issued', outcome: 'stored' })).toBe(1);
      expect(received({ source: 'checkout', event: '', outcome: 'invalid_signature' })).toBe(1);
      expect(received({ source: 'checkout', event: '', outcome: 'unsupported_media_type' })).toBe(1);
      // The unknown path segment is not a label value: every unknown source is one series.
      expect(received({ source: '_other', event: '', outcome: 'unknown_source' })).toBe(1);
      expect(text).not.toContain('no-such-source');

      expect(sampleValue(samples, 'hookrelay_ingest_duration_seconds_count', { source: 'checkout', result: 'accepted' })).toBe(4);
      expect(sampleValue(samples, 'hookrelay_ingest_duration_seconds_count', { source: 'checkout', result: 'refused' })).toBe(2);

      const attempts = (rule: string, outcome: string) => sampleValue(samples, 'hookrelay_delivery_attempts_total', { rule, outcome });
      expect(attempts('forward', 'pending')).toBe(1);
      expect(attempts('forward', 'delivered')).toBe(2);
      expect(attempts('refunds', 'dead')).toBe(1);
      expect(sampleValue(samples, 'hookrelay_delivery_attempt_duration_seconds_count', { rule: 'forward' })).toBe(3);
      expect(sampleValue(samples, 'hookrelay_outbox_pending')).toBe(0);
      expect(sampleValue(samples, 'hookrelay_outbox_due')).toBe(0);
      expect(sampleValue(samples, 'hookrelay_outbox_oldest_due_age_seconds')).toBe(0);
      expect(sampleValue(samples, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
      expect(sampleValue(samples, 'nodejs_eventloop_lag_seconds')).toBeDefined();

      for (const secret of [TEST_SECRET, 'rule-signing-secret', 'header-secret-value', 'url-secret-in-query', sink.url, refusing.url, '/hooks']) {
        expect(text).not.toContain(secret);
      }
      // Destinations appear only as origins (scheme, host, port: no path, query or credentials) in the per-destination gauges.
      for (const url of [sink.url, refusing.url]) {
        expect(sampleValue(samples, 'hookrelay_destination_concurrency_limit', { destination: new URL(url).origin })).toBeGreaterThanOrEqual(1);
        expect(sampleValue(samples, 'hookrelay_destination_in_flight', { destination: new URL(url).origin })).toBe(0);
      }
      const linesNamingAHost = text.split('\n').filter((line) => line.includes('127.0.0.1'));
      expect(linesNamingAHost).toHaveLength(4);
      for (const line of linesNamingAHost) expect(line).toMatch(/^hookrelay_destination_(concurrency_limit|in_flight)\{destination="http:\/\/127\.0\.0\.1:\d+"\} \d+$/);
      for (const id of [first.result.id, first.result.checkoutId as string]) expect(text).not.toContain(id);
    } finally {
      await app.close();
      await sink.close();
      await refusing.close();
    }
  });

  it('reports pending and due deliveries and the age of the oldest due one', async () => {
    const rulesDir = rulesDirWith({
      'now.yaml': 'id: now\non: [transfer:succeeded]\nto:\n  url: http://127.0.0.1:9/hook\n',
      'later.yaml': 'id: later\non: [transfer:succeeded]\nto:\n  url: http://127.0.0.1:9/hook\nretry: { schedule: [1h] }\n',
    });
    // No worker: the outbox only fills.
    const app = await startTestReceiver({ rulesDir, delivery: { ...TEST_DELIVERY, enabled: false } });
    try {
      await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
      await new Promise((r) => setTimeout(r, 120));
      const { samples } = await scrape(app);
      expect(sampleValue(samples, 'hookrelay_outbox_pending')).toBe(2);
      expect(sampleValue(samples, 'hookrelay_outbox_due')).toBe(1);
      expect(sampleValue(samples, 'hookrelay_outbox_oldest_due_age_seconds')).toBeGreaterThanOrEqual(0.1);
      expect(sampleValue(samples, 'hookrelay_dead_letters')).toBe(0);
    } finally {
      await app.close();
    }
  });

  it('keeps event-name labels bounded: names beyond the limit are counted as _other', async () => {
    const app = await startTestReceiver({ metrics: { maxEventLabels: 2 } });
    try {
      for (const event of ['a:one', 'b:two', 'c:three', 'd:four', 'a:one']) {
        expect((await postSigned(app.webhookUrl(), unrecognised(event), TEST_SECRET)).status).toBe(200);
      }
      expect((await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET)).status).toBe(200);
      const { samples, text } = await scrape(app);
      const stored = (event: string) => sampleValue(samples, 'hookrelay_events_received_total', { source: 'checkout', event, outcome: 'stored' });
      expect(stored('a:one')).toBe(2);
      expect(stored('b:two')).toBe(1);
      expect(stored('_other')).toBe(2);
      // Events with a schema always keep their own label.
      expect(stored('transfer:succeeded')).toBe(1);
      expect(text).not.toContain('c:three');
    } finally {
      await app.close();
    }
  });

  it('counts rule-set reloads and rejected edits', async () => {
    const rulesDir = rulesDirWith({ 'a.yaml': 'id: a\non: [transfer:succeeded]\nto:\n  url: http://127.0.0.1:9/a\n' });
    const app = await startTestReceiver({ rulesDir, delivery: { ...TEST_DELIVERY, enabled: false } });
    try {
      const value = async (name: string) => sampleValue((await scrape(app)).samples, name);
      expect(await value('hookrelay_rules_reloads_total')).toBe(0);
      writeFileSync(join(rulesDir, 'a.yaml'), 'id: a\non: [transfer:succeeded]\nto:\n  url: http://127.0.0.1:9/b\n');
      await eventually(async () => (await value('hookrelay_rules_reloads_total')) === 1, 8000, 'the reload to be counted');
      writeFileSync(join(rulesDir, 'a.yaml'), 'id: a\non: [transfer:succeeded]\nto:\n  url: not a url\n');
      await eventually(async () => (await value('hookrelay_rules_reload_errors_total')) === 1, 8000, 'the bad edit to be counted');
      expect(await value('hookrelay_rules_reloads_total')).toBe(1);
    } finally {
      await app.close();
    }
  });

  it('asks for the bearer token when one is configured, and never prints it', async () => {
    const token = 'metrics-token-0123456789';
    const app = await startTestReceiver({ metrics: { token } });
    try {
      const anonymous = await scrape(app);
      expect(anonymous.status).toBe(401);
      expect(JSON.parse(anonymous.text).error.code).toBe('unauthorized');
      expect((await scrape(app, { authorization: 'Bearer wrong-token-0123456789' })).status).toBe(401);
      const authorised = await scrape(app, { authorization: `Bearer ${token}` });
      expect(authorised.status).toBe(200);
      expect(sampleValue(authorised.samples, 'hookrelay_outbox_pending')).toBe(0);
      expect(authorised.text).not.toContain(token);
    } finally {
      await app.close();
    }
  });

  it('is not served when disabled', async () => {
    const app = await startTestReceiver({ metrics: { enabled: false } });
    try {
      expect((await send(`${app.url}/metrics`)).status).toBe(404);
    } finally {
      await app.close();
    }
  });
});
