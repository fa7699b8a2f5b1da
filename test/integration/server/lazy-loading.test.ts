import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { START_NODE_OPTIONS, runCli } from '../../helpers/cli-process.js';
import { postSigned, send } from '../../helpers/http.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';
import { startWebhookSink } from '../../helpers/webhook-sink.js';

afterAll(() => removeTempDirs());

const RECORDER = fileURLToPath(new URL('../../helpers/record-loads.mjs', import.meta.url));
const SECRET = 'lazy-loading-secret';
const ADMIN_TOKEN = 'admin-token-0123456789abcdef';

/**
 * The dist files (relative, e.g. `admin/api/admin-api.js`) and packages loaded so far by the main thread
 * (the receiver), or with `threads: 'workers'` by the other threads (the delivery thread).
 */
function loaded(file: string, threads: 'main' | 'workers' = 'main'): { files: Set<string>; packages: Set<string> } {
  const urls = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(' ') as [string, string])
    .filter(([thread]) => (thread === '0') === (threads === 'main'))
    .map(([, url]) => url);
  const files = new Set(urls.map((url) => /\/dist\/(.+)$/.exec(url)?.[1]).filter((f): f is string => f !== undefined));
  const packages = new Set(urls.map((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1]).filter((p): p is string => p !== undefined));
  return { files, packages };
}

describe('hookrelay serve loads what a request needs on first use', () => {
  it('starts without the admin API, console, PostgreSQL client or other commands, and loads them on their first request', async () => {
    const dir = makeTempDir();
    const record = join(dir, 'loaded.txt');
    writeFileSync(record, '');
    const proc = runCli(['serve'], {
      nodeOptions: [...START_NODE_OPTIONS, '--import', RECORDER],
      env: { HOOKRELAY_HOST: '127.0.0.1', HOOKRELAY_PORT: '0', HOOKRELAY_DATA_DIR: dir, HOOKRELAY_RULES_DIR: join(dir, 'rules'), HOOKRELAY_SECRET: SECRET, HOOKRELAY_ADMIN_TOKEN: ADMIN_TOKEN, HOOKRELAY_ALLOW_NETWORKS: '127.0.0.1/32', RECORD_LOADS_FILE: record },
    });
    try {
      // The recorder's loader thread slows the start down: a generous wait on a busy machine.
      const url = (await proc.waitForLog((line) => line.msg === 'hookrelay listening', 60_000)).url as string;
      const atStart = loaded(record);
      expect(atStart.files.has('hookrelay.js')).toBe(true); // the recorder sees our files
      for (const file of ['admin/api/admin-api.js', 'admin/openapi.js', 'admin/console/console-router.js', 'cli/program.js', 'commands/listen.js', 'commands/events.js', 'mock-checkout/command.js', 'store/postgres/postgres-store.js']) {
        expect([file, atStart.files.has(file)]).toEqual([file, false]);
      }
      expect(atStart.packages.has('pg')).toBe(false);
      // Undici: the delivery thread sends (it starts once there is something to deliver: here, no rules),
      // the receiver only on its first alert or resend.
      expect(atStart.packages.has('undici')).toBe(false);
      expect(loaded(record, 'workers').files.has('delivery/thread/delivery-thread-entry.js')).toBe(false);
      expect(loaded(record, 'workers').packages.has('undici')).toBe(false);

      // Ingest and health checks need none of it.
      expect((await postSigned(`${url}/webhooks/checkout`, sampleTransferSucceeded(), SECRET)).status).toBe(200);
      expect((await send(`${url}/healthz`)).status).toBe(200);
      expect(loaded(record).files.has('admin/api/admin-api.js')).toBe(false);

      // First requests: the same answers as ever, concurrent ones included.
      const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };
      const [events, openapi] = await Promise.all([send(`${url}/admin/api/events`, { headers: bearer }), send(`${url}/admin/api/openapi.json`, { headers: bearer })]);
      expect(events.status).toBe(200);
      expect(events.json.items).toHaveLength(1);
      expect(openapi.status).toBe(200);
      expect(openapi.json.openapi).toMatch(/^3\.1/);
      expect((await send(`${url}/admin/api/events`)).status).toBe(401);
      expect(loaded(record).files.has('admin/api/admin-api.js')).toBe(true);
      expect(loaded(record).files.has('admin/console/console-router.js')).toBe(false);
      expect((await send(`${url}/console/login`)).status).toBe(200);
      expect(loaded(record).files.has('admin/console/console-router.js')).toBe(true);
      expect((await send(`${url}/console-not-here`)).status).toBe(404);

      const sink = await startWebhookSink();
      try {
        const resent = await send(`${url}/admin/api/events/${events.json.items[0].id}/resend`, {
          method: 'POST',
          headers: { ...bearer, 'content-type': 'application/json' },
          body: JSON.stringify({ url: sink.url, signing: { mode: 'original' } }),
        });
        expect(resent.json).toMatchObject({ status: 200 });
        expect(sink.received).toHaveLength(1);
        expect(loaded(record).packages.has('undici')).toBe(true);
      } finally {
        await sink.close();
      }
    } finally {
      proc.child.kill('SIGTERM');
      await proc.exited;
    }
  }, 120_000);

  it('builds the admin API as soon as the console is first opened: its next requests go there', async () => {
    const dir = makeTempDir();
    const record = join(dir, 'loaded.txt');
    writeFileSync(record, '');
    const proc = runCli(['serve'], {
      nodeOptions: [...START_NODE_OPTIONS, '--import', RECORDER],
      env: { HOOKRELAY_HOST: '127.0.0.1', HOOKRELAY_PORT: '0', HOOKRELAY_DATA_DIR: dir, HOOKRELAY_RULES_DIR: join(dir, 'rules'), HOOKRELAY_SECRET: SECRET, HOOKRELAY_ADMIN_TOKEN: ADMIN_TOKEN, HOOKRELAY_ALLOW_NETWORKS: '127.0.0.1/32', RECORD_LOADS_FILE: record },
    });
    try {
      const url = (await proc.waitForLog((line) => line.msg === 'hookrelay listening', 60_000)).url as string;
      expect((await send(`${url}/console/login`)).status).toBe(200);
      const deadline = Date.now() + 30_000;
      while (!loaded(record).files.has('admin/api/admin-api.js') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(loaded(record).files.has('admin/api/admin-api.js')).toBe(true);
    } finally {
      proc.child.kill('SIGTERM');
      await proc.exited;
    }
  }, 120_000);
});
