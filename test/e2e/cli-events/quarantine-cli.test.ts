import { afterAll, describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { postSigned } from '../../helpers/http.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { startWebhookSink } from '../../helpers/webhook-sink.js';
import { ADMIN_TOKEN, hookrelay, SECRET, startServer, until } from './cli-harness.js';

afterAll(() => removeTempDirs());

describe('events list --quarantine and events release', { timeout: 120_000 }, () => {
  it('lists a body kept after a 422, refuses a release the schema still refuses, releases it once with --force', async () => {
    const sink = await startWebhookSink();
    const server = await startServer({ 'a.yaml': `id: a\non: [transfer:succeeded]\nto:\n  url: ${sink.url}/a\n` });
    try {
      const sample = sampleTransferSucceeded();
      const drifted = { ...sample, result: { ...sample.result, quantity: 'two' } };
      expect((await postSigned(server.webhook, drifted, SECRET)).status).toBe(422);
      const local = ['--direct', '--data-dir', server.dataDir, '--rules-dir', server.rulesDir];
      const remote = ['--url', server.url];
      const token = { HOOKRELAY_ADMIN_TOKEN: ADMIN_TOKEN };

      const listed = await hookrelay(['events', 'list', '--quarantine', 'held', ...local, '--json']);
      expect(listed.code).toBe(0);
      expect(listed.json.items).toEqual([expect.objectContaining({ quarantine: 'held', validation: 'invalid', issues: expect.objectContaining({ from: 'schema' }) })]);
      const id = listed.json.items[0].id as number;
      const table = await hookrelay(['events', 'list', '--quarantine', 'held', ...remote], token);
      expect(table.stdout).toContain('transfer:succeeded (held)');
      const shown = await hookrelay(['events', 'show', String(id), ...local]);
      expect(shown.stdout).toMatch(/^issues \(event schema\)$/m);
      expect(shown.stdout).toMatch(/^ {2}result\.quantity: /m);

      const refused = await hookrelay(['events', 'release', String(id), ...remote], token);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain('still fails the event schema');
      const released = await hookrelay(['events', 'release', String(id), '--force', '--by', 'ops', ...remote], token);
      expect(released.code).toBe(0);
      expect(released.stdout).toContain(`released event ${id} (forced): 1 deliveries created`);
      await sink.waitFor(1);
      const again = await hookrelay(['events', 'release', String(id), '--force', ...local]);
      expect(again.code).not.toBe(0);
      expect(again.stderr).toContain('was released before');
      const detail = await hookrelay(['events', 'show', String(id), ...local, '--json']);
      expect(detail.json.event.release).toMatchObject({ releasedBy: 'ops', forced: true });
      await until(async () => (await hookrelay(['events', 'show', String(id), ...local, '--json'])).json.deliveries[0]?.state === 'delivered');
      expect(sink.received).toHaveLength(1);
    } finally {
      await server.stop();
      await sink.close();
    }
  });
});
