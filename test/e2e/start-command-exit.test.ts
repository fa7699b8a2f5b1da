import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../src/samples/transfer-succeeded.js';
import { sqliteDriverName } from '../../src/sqlite-driver.js';
import { startServeProcess } from '../helpers/cli-process.js';
import { postSigned, send } from '../helpers/http.js';
import { rulesDirWith } from '../helpers/rules.js';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';
import { startWebhookSink, type WebhookSink } from '../helpers/webhook-sink.js';

afterAll(() => removeTempDirs());

const SECRET = 'start-command-secret';
const CYCLES = 4;
const WEBHOOKS_PER_CYCLE = 5;
// A cycle takes about 3 s (start, forward, graceful stop); a machine under load takes several times that.
const TIMEOUT_MS = 120_000;

// A native driver that frees statements without a current Node environment aborts the process
// (exit 134) while it serves or as it stops; this runs the start command on the runtime under test.
describe(`the start command on Node ${process.version} (${sqliteDriverName})`, () => {
  let sink: WebhookSink | undefined;
  afterAll(async () => sink?.close());

  it(`serves webhooks, forwards them and exits 0 on SIGTERM, ${CYCLES} times over one data dir`, async () => {
    sink = await startWebhookSink();
    const configFile = join(makeTempDir(), 'hookrelay.yaml');
    writeFileSync(configFile, 'delivery:\n  allowNetworks: [127.0.0.1/32]\n  pollIntervalMs: 50\n');
    const env = {
      HOOKRELAY_CONFIG: configFile,
      HOOKRELAY_DATA_DIR: makeTempDir(),
      HOOKRELAY_RULES_DIR: rulesDirWith({ 'sink.yaml': `id: sink\non: [transfer:succeeded]\nto:\n  url: ${sink.url}\n` }),
      HOOKRELAY_SECRET: SECRET,
    };
    const exits: { code: number | null; signal: NodeJS.Signals | null; stderr: string }[] = [];
    for (let cycle = 1; cycle <= CYCLES; cycle++) {
      const server = await startServeProcess(env);
      for (let i = 0; i < WEBHOOKS_PER_CYCLE; i++) {
        expect((await postSigned(`${server.url}/webhooks/checkout`, sampleTransferSucceeded(), SECRET)).status).toBe(200);
      }
      await sink.waitFor(cycle * WEBHOOKS_PER_CYCLE);
      expect((await send(`${server.url}/healthz`)).status).toBe(200);
      server.child.kill('SIGTERM');
      const { code, signal } = await server.exited;
      exits.push({ code, signal, stderr: code === 0 ? '' : server.stderr() });
    }
    expect(exits).toEqual(Array.from({ length: CYCLES }, () => ({ code: 0, signal: null, stderr: '' })));
    expect(sink.received).toHaveLength(CYCLES * WEBHOOKS_PER_CYCLE);
  }, TIMEOUT_MS);
});
