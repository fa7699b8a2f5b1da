import { afterAll, afterEach, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { verifyHmacSha256Hex } from '../../../src/signing/hmac-sha256-hex.js';
import { describeEachBackend } from '../../helpers/backends.js';
import { postSigned } from '../../helpers/http.js';
import { startTestReceiver, TEST_SECRET } from '../../helpers/receiver.js';
import { eventually, rulesDirWith, TEST_DELIVERY } from '../../helpers/rules.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { startWebhookSink, type WebhookSink } from '../../helpers/webhook-sink.js';

const running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.close()));
});
afterAll(() => removeTempDirs());

const ALERT_SECRET = 'alert-secret-0123456789';

async function sink(reply: () => number = () => 200): Promise<WebhookSink> {
  const s = await startWebhookSink(reply);
  running.push(s);
  return s;
}

const texts = (channel: WebhookSink): string[] => channel.received.map((r) => (JSON.parse(r.rawBody.toString()) as { text: string }).text);

describeEachBackend('the alert webhook', (backend) => {
  it('posts signed Slack-compatible messages when a destination fails, when dead letters pass the threshold and when it recovers', async () => {
    let down = true;
    const destination = await sink(() => (down ? 503 : 200));
    const channel = await sink();
    const app = await startTestReceiver({
      ...(await backend.storage()),
      rulesDir: rulesDirWith({ 'r.yaml': `id: r\non: [transfer:succeeded]\nto:\n  url: ${destination.url}\nretry:\n  schedule: [0s]\nredrive: true\n` }),
      delivery: { ...TEST_DELIVERY, failureThreshold: 2, coolDownMs: 500, redrive: { checkIntervalMs: 100 } },
      alerts: { url: `${channel.url}/alerts`, secret: ALERT_SECRET, dampingMs: 60_000, deadLetterThreshold: 2, checkIntervalMs: 100 },
    });
    running.unshift(app);
    const origin = new URL(destination.url).origin;
    for (const email of ['a@example.com', 'b@example.com']) await postSigned(app.webhookUrl(), sampleTransferSucceeded({ email }), TEST_SECRET);
    await eventually(() => texts(channel).some((t) => t.includes('is failing')) && texts(channel).some((t) => t.includes('dead letters')), 20_000, 'two alerts');
    expect(texts(channel)).toEqual(expect.arrayContaining([
      expect.stringMatching(new RegExp(`^hookrelay: destination ${origin} is failing \\(circuit open, failing since .+\\)\\.$`)),
      'hookrelay: 2 dead letters (threshold 2).',
    ]));
    for (const request of channel.received) {
      expect(request.headers['content-type']).toBe('application/json');
      expect(verifyHmacSha256Hex([ALERT_SECRET], request.rawBody, String(request.headers['x-service-signature']))).toBe(true);
    }
    down = false;
    // Recovery within the damping window: held back, then sent when the window ends. Here the window is long,
    // so the recovery message waits; the failing one already went, and nothing about the destination floods.
    await eventually(async () => (await app.store.listOutages({ open: true, limit: 1 })).length === 0, 20_000, 'the outage closed');
    expect(texts(channel).filter((t) => t.includes(origin))).toHaveLength(1);
  }, 60_000);

  it('sends the recovery with the count of held-back alerts when the damping window ends', async () => {
    let down = true;
    const destination = await sink(() => (down ? 503 : 200));
    const channel = await sink();
    const app = await startTestReceiver({
      ...(await backend.storage()),
      rulesDir: rulesDirWith({ 'r.yaml': `id: r\non: [transfer:succeeded]\nto:\n  url: ${destination.url}\nretry:\n  schedule: [0s]\nredrive: true\n` }),
      delivery: { ...TEST_DELIVERY, failureThreshold: 2, coolDownMs: 300, redrive: { checkIntervalMs: 100 } },
      alerts: { url: channel.url, dampingMs: 1_500, deadLetterThreshold: 1000, checkIntervalMs: 60_000 },
    });
    running.unshift(app);
    for (const email of ['a@example.com', 'b@example.com']) await postSigned(app.webhookUrl(), sampleTransferSucceeded({ email }), TEST_SECRET);
    await eventually(() => texts(channel).length === 1, 20_000, 'the failing alert');
    down = false;
    const recovery = await eventually(() => texts(channel).slice(1).find((t) => t.includes('recovered')), 20_000, 'the recovery alert');
    expect(recovery).toMatch(/^hookrelay: destination http:\/\/127\.0\.0\.1:\d+ recovered after \d+ s; \d+ dead letters redriven\. \(1 alert about this held back since the last message; this is the latest\)$/);
    expect(channel.received[0]!.headers['x-service-signature']).toBeUndefined(); // no secret configured: unsigned
  }, 60_000);
});
