import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../src/samples/transfer-succeeded.js';
import { startServeProcess } from '../helpers/cli-process.js';
import { postSigned } from '../helpers/http.js';
import { eventually, rulesDirWith } from '../helpers/rules.js';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';
import { startWebhookSink } from '../helpers/webhook-sink.js';

afterAll(() => removeTempDirs());

const TOKEN = 'redrive-restart-admin-token-0123456789';

async function admin<T>(url: string, path: string): Promise<T> {
  const reply = await fetch(`${url}/admin/api${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return (await reply.json()) as T;
}

describe('redrive across a crash', () => {
  it('a node killed during the outage redrives after its restart: the open outage was kept', async () => {
    let down = true;
    const sink = await startWebhookSink(() => (down ? 503 : 200));
    const configFile = join(makeTempDir(), 'hookrelay.yaml');
    // A long pause: the first process never probes before it is killed.
    writeFileSync(configFile, 'delivery:\n  allowNetworks: [127.0.0.1/32]\n  pollIntervalMs: 50\n  failureThreshold: 4\n  coolDownMs: 60000\n  redrive:\n    checkIntervalMs: 100\n');
    const env = {
      HOOKRELAY_CONFIG: configFile,
      HOOKRELAY_DATA_DIR: makeTempDir(),
      HOOKRELAY_RULES_DIR: rulesDirWith({ 'sink.yaml': `id: sink\non: [transfer:succeeded]\nto:\n  url: ${sink.url}\nretry:\n  schedule: [0s, 50ms]\nredrive: true\n` }),
      HOOKRELAY_SECRET: 's',
      HOOKRELAY_ADMIN_TOKEN: TOKEN,
    };
    try {
      const first = await startServeProcess(env);
      for (let i = 0; i < 2; i++) await postSigned(`${first.url}/webhooks/checkout`, sampleTransferSucceeded(), 's');
      const dead = await eventually(async () => {
        const page = await admin<{ items: { id: number }[] }>(first.url, '/deliveries?state=dead');
        return page.items.length === 2 ? page.items.map((d) => d.id).sort((a, b) => a - b) : null;
      }, 20_000, 'both dead');
      await eventually(async () => (await admin<{ items: unknown[] }>(first.url, '/outages?open=true')).items.length === 1, 10_000, 'the outage');
      first.child.kill('SIGKILL');
      await first.exited;
      down = false;
      const before = sink.received.length;

      const second = await startServeProcess(env);
      const redriven = await sink.waitFor(before + 2, 20_000);
      const outages = await eventually(async () => {
        const { items } = await admin<{ items: { closedAt: string | null; redriven: number }[] }>(second.url, '/outages');
        return items[0]?.closedAt ? items : null;
      }, 10_000, 'the outage closed');
      second.child.kill('SIGTERM');
      await second.exited;

      expect(redriven.slice(before).map((r) => r.headers['x-hookrelay-delivery'])).toEqual(dead.map((id) => `dlv_${id}`));
      expect(sink.received).toHaveLength(before + 2); // each once
      expect(outages).toEqual([expect.objectContaining({ redriven: 2 })]);
    } finally {
      await sink.close();
    }
  }, 90_000);
});
