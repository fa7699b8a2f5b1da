import { Writable } from 'node:stream';
import { afterEach, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.js';
import { SAMPLE_CHECKOUT, TEST_API_KEY, startMock, type RunningMock } from './support/mock-harness.js';
import { startWebhookSink, type WebhookSink } from '../../helpers/webhook-sink.js';

let mock: RunningMock | undefined;
let sink: WebhookSink | undefined;
afterEach(async () => {
  await mock?.close();
  await sink?.close();
});

it('logs one line per request and per delivery attempt, without keys, secrets or signatures', async () => {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  sink = await startWebhookSink((index) => (index === 0 ? 502 : 200));
  mock = await startMock({ logger: createLogger('info', destination) });
  const secret = 'whsec_must_not_be_logged';
  const created = await mock.call('POST', '/api/v1/checkout', { ...SAMPLE_CHECKOUT, webhookUrls: [sink.url], webhookSecret: secret });
  await mock.call('POST', `/mock/checkout/${created.json.result.id}/purchase`, {});

  const requests = lines.filter((line) => line.msg === 'mock checkout request');
  expect(requests.map((line) => [line.method, line.path, line.status])).toEqual([
    ['POST', '/api/v1/checkout', 200],
    ['POST', `/mock/checkout/${created.json.result.id}/purchase`, 200],
  ]);
  const attempts = lines.filter((line) => line.msg === 'mock webhook attempt');
  expect(attempts.map((line) => [line.attempt, line.status])).toEqual([[1, 502], [2, 200]]);

  const everything = JSON.stringify(lines);
  const signature = String(sink.received[0]!.headers['x-service-signature']);
  for (const sensitive of [TEST_API_KEY, secret, signature]) expect(everything).not.toContain(sensitive);
});
