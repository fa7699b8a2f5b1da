import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { verifyHmacSha256Hex } from '../../../src/signing/hmac-sha256-hex.js';
import { runCli } from '../../helpers/cli-process.js';
import { send } from '../../helpers/http.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';
import { startWebhookSink } from '../../helpers/webhook-sink.js';
import { ADMIN_TOKEN, awkwardBodies, hookrelay, postAll, SECRET, startServer, until } from './cli-harness.js';

afterAll(() => removeTempDirs());

const withToken = { HOOKRELAY_ADMIN_TOKEN: ADMIN_TOKEN };

describe('events and deliveries commands against a running server (--url, admin API)', { timeout: 120_000 }, () => {
  it('lists, shows and exports exactly what local mode does, and the export imports byte-exact', async () => {
    const server = await startServer();
    try {
      const bodies = [...awkwardBodies(5), Buffer.from(JSON.stringify(sampleTransferSucceeded()))];
      const ids = await postAll(server.webhook, bodies);
      const remote = ['--url', server.url];
      const local = ['--data-dir', server.dataDir, '--rules-dir', server.rulesDir, '--direct'];

      const remoteList = await hookrelay(['events', 'list', ...remote, '--event', 'order:noted0', '--json'], withToken);
      const localList = await hookrelay(['events', 'list', ...local, '--event', 'order:noted0', '--json']);
      expect(remoteList.code).toBe(0);
      expect(remoteList.json.items).toHaveLength(3);
      expect(remoteList.stdout).toBe(localList.stdout);

      const firstPage = await hookrelay(['events', 'list', ...remote, '--limit', '4', '--json'], withToken);
      const secondPage = await hookrelay(['events', 'list', ...remote, '--limit', '4', '--cursor', firstPage.json.nextCursor, '--json'], withToken);
      expect([...firstPage.json.items, ...secondPage.json.items].map((e: { id: number }) => e.id)).toEqual([...ids].reverse());
      expect(secondPage.json.nextCursor).toBeNull();

      const remoteShow = await hookrelay(['events', 'show', String(ids[2]), ...remote, '--json'], withToken);
      const localShow = await hookrelay(['events', 'show', String(ids[2]), ...local, '--json']);
      expect(remoteShow.stdout).toBe(localShow.stdout);
      expect(Buffer.from(remoteShow.json.event.bodyBase64, 'base64').equals(bodies[2]!)).toBe(true);

      const file = join(makeTempDir(), 'remote.ndjson');
      const exported = await hookrelay(['events', 'export', ...remote, '-o', file], withToken);
      expect(exported.stderr).toContain('exported 6 events');
      const localExport = await hookrelay(['events', 'export', ...local]);
      expect(readFileSync(file, 'utf8')).toBe(localExport.stdout);

      const fresh = makeTempDir();
      const imported = await hookrelay(['events', 'import', file, '--data-dir', fresh, '--json']);
      expect(imported.json).toEqual({ imported: 6, duplicates: 0, seenBefore: 0, interrupted: false, unconfiguredSources: {} });
      expect((await hookrelay(['events', 'export', '--data-dir', fresh])).stdout).toBe(localExport.stdout);
    } finally {
      await server.stop();
    }
  });

  it('replays, retries and resends through the API, bulk operations as jobs', async () => {
    let accept = false;
    const sink = await startWebhookSink(() => (accept ? 200 : 400));
    const target = await startWebhookSink();
    const server = await startServer({ 'fwd.yaml': `id: fwd\non: [transfer:succeeded]\nto:\n  url: ${sink.url}\n` });
    const remote = ['--url', server.url];
    try {
      const bodies = [sampleTransferSucceeded(), sampleTransferSucceeded(), sampleTransferSucceeded()].map((b) => Buffer.from(JSON.stringify(b)));
      const ids = await postAll(server.webhook, bodies);
      await sink.waitFor(3, 20_000);
      const dead = await until(async () => {
        const r = await hookrelay(['deliveries', 'list', '--state', 'dead', ...remote, '--json'], withToken);
        return r.json.items.length === 3 ? r.json.items : null;
      }, 30_000, 'three dead letters');

      // Whether each event was forwarded: remotely through the API, and locally from the data dir.
      const deadOnly = { state: 'dead', pending: 0, delivered: 0, dead: 1 };
      for (const target of [remote, ['--data-dir', server.dataDir]]) {
        const listed = await hookrelay(['events', 'list', ...target, '--json'], withToken);
        expect(listed.json.items.map((e: { forwarding: unknown }) => e.forwarding)).toEqual([deadOnly, deadOnly, deadOnly]);
        const table = await hookrelay(['events', 'list', ...target], withToken);
        expect(table.stdout.split('\n')[0]).toMatch(/\sFORWARDED$/);
        expect(table.stdout.match(/\sdead$/gm)).toHaveLength(3);
      }

      accept = true;
      const one = await hookrelay(['deliveries', 'retry', String(dead[0].id), ...remote], withToken);
      expect(one.stdout.trim()).toBe(`delivery ${dead[0].id} is pending again, due now`);
      await sink.waitFor(4, 20_000);
      const all = await hookrelay(['deliveries', 'retry', '--rule', 'fwd', ...remote, '--json'], withToken);
      expect(all.json).toMatchObject({ state: 'done', total: 2, processed: 2, created: 2, jobId: expect.any(String) });
      await sink.waitFor(6, 20_000);

      const replayed = await hookrelay(['events', 'replay', String(ids[0]), ...remote, '--json'], withToken);
      expect(replayed.json.deliveries).toEqual([expect.objectContaining({ ruleId: 'fwd', origin: 'replay', state: 'pending' })]);
      await sink.waitFor(7, 20_000);
      expect(sink.received[6]!.rawBody.equals(bodies[0]!)).toBe(true);

      const mismatch = await hookrelay(['events', 'replay', String(ids[0]), '--rule', 'nope', ...remote], withToken);
      expect(mismatch.code).toBe(1);
      expect(mismatch.stderr).toContain('No rule "nope"');

      const bulk = await hookrelay(['events', 'replay', '--event', 'transfer:succeeded', ...remote], withToken);
      expect(bulk.stdout).toMatch(/^job \d+ done: 3 of 3 events processed, 3 deliveries queued, 0 failed\nroute current\n  rule \S+: 3\n/);
      await sink.waitFor(10, 20_000);

      const resent = await hookrelay(['events', 'resend', String(ids[1]), '--to', target.url, ...remote], withToken);
      expect(resent.stdout).toMatch(/^HTTP 200 in \d+ ms$/m);
      const [received] = await target.waitFor(1, 20_000);
      expect(received!.rawBody.equals(bodies[1]!)).toBe(true);
      expect(verifyHmacSha256Hex([SECRET], received!.rawBody, String(received!.headers['x-service-signature']))).toBe(true);

      // Edit and replay through the API: the copy is made via the CLI and sent to a URL, unsigned.
      const editedFile = join(makeTempDir(), 'edited.json');
      writeFileSync(editedFile, '{"event":"transfer:succeeded","result":{"id":"edited"}}');
      const edited = await hookrelay(['events', 'replay', String(ids[1]), '--body', editedFile, '--meant-invalid', '--to', `${target.url}/qa`, ...remote, '--json'], withToken);
      expect(edited.code, edited.stderr).toBe(0);
      expect(edited.json.event).toMatchObject({ validation: 'invalid', edit: { editedFrom: ids[1], via: 'cli', number: 1 } });
      const [, copySent] = await target.waitFor(2, 20_000);
      expect(copySent!.path).toBe('/hooks/qa');
      expect(copySent!.headers['x-service-signature']).toBeUndefined();
    } finally {
      await server.stop();
      await sink.close();
      await target.close();
    }
  });

  it('asks for the token, refuses import, and cancels the server job on Ctrl-C', async () => {
    // The transform costs about half a millisecond per event, so the replay of 20,000 takes seconds and the
    // Ctrl-C below lands while it runs, however slow or fast the machine.
    const slowTransform = 'transform: |\n  { "id": result.id, "digest": $join([1..400].$string(), ",") }\n';
    const server = await startServer({ 'later.yaml': `id: later\non: [order:bulk]\n${slowTransform}to:\n  url: http://127.0.0.1:9/hook\nretry: { schedule: [1h] }\n` });
    const remote = ['--url', server.url];
    try {
      // An empty data dir beside the command: no admin.token there to fall back on.
      const noToken = await hookrelay(['events', 'list', ...remote], { HOOKRELAY_DATA_DIR: makeTempDir() });
      expect(noToken.code).toBe(1);
      expect(noToken.stderr).toContain('HOOKRELAY_ADMIN_TOKEN');
      const wrong = await hookrelay(['events', 'list', ...remote, '--token', 'not-the-admin-token-000000']);
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toContain('--token');
      expect(wrong.stderr).not.toContain('not-the-admin-token-000000');
      const importing = await hookrelay(['events', 'import', '-', ...remote], withToken);
      expect(importing.stderr).toContain('--data-dir');

      // Many events, imported into the running server's data dir beside it (local mode).
      const lines = Array.from({ length: 20_000 }, (_, i) => JSON.stringify({
        format: 'hookrelay.event.v1', source: 'checkout', event: 'order:bulk', transferId: `b${i}`, validation: 'unrecognised', checkoutId: null, email: null,
        walletAddress: null, receivedAt: '2025-01-01T00:00:00.000Z', lastReceivedAt: '2025-01-01T00:00:00.000Z', receivedCount: 1, headers: {},
        bodyBase64: Buffer.from(`{"event":"order:bulk","result":{"id":"b${i}"}}`).toString('base64'),
      }));
      const file = join(makeTempDir(), 'bulk.ndjson');
      writeFileSync(file, `${lines.join('\n')}\n`);
      expect((await hookrelay(['events', 'import', file, '--data-dir', server.dataDir, '--json'])).json.imported).toBe(20_000);
      // The running server sees what another process committed to its database.
      const newest = (await send(`${server.url}/admin/api/events?limit=1`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json;
      expect(newest.items[0]).toMatchObject({ event: 'order:bulk', transferId: 'b19999' });

      const replay = runCli(['events', 'replay', '--all', ...remote, '--json'], { env: withToken });
      const jobs = async () => (await send(`${server.url}/admin/api/jobs`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json;
      await until(async () => (await jobs())[0]?.processed > 0, 20_000, 'the job to make progress');
      replay.child.kill('SIGINT');
      expect((await replay.exited).code).toBe(130);
      const [job] = await jobs();
      expect(job.state).toBe('cancelled');
      // Its retention (first pass a few seconds after start) kept these 2025 events: their age counts from the import.
      expect(job.total).toBe(20_000);
      expect(job.processed).toBeLessThan(20_000);
      expect(JSON.parse(replay.stdout())).toMatchObject({ state: 'cancelled', jobId: String(job.id) });
    } finally {
      await server.stop();
    }
  });
});
