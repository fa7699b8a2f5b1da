import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { verifyHmacSha256Hex } from '../../../src/signing/hmac-sha256-hex.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';
import { startWebhookSink } from '../../helpers/webhook-sink.js';
import { awkwardBodies, hookrelay, postAll, SECRET, startServer, until } from './cli-harness.js';

afterAll(() => removeTempDirs());

describe('events replay|resend and deliveries list|retry on a data dir, with the server delivering', { timeout: 120_000 }, () => {
  it('replays one event, a filtered set, and a named rule (refused without --force when it does not match)', async () => {
    const sink = await startWebhookSink();
    const server = await startServer({
      'fwd.yaml': `id: fwd\non: [order:noted0, transfer:succeeded]\nto:\n  url: ${sink.url}\n`,
      'big.yaml': `id: big\non: [transfer:succeeded]\nwhere:\n  result.quantity: { $gt: 100 }\nto:\n  url: ${sink.url}\n`,
    });
    const local = ['--data-dir', server.dataDir, '--rules-dir', server.rulesDir, '--direct'];
    try {
      const [body] = awkwardBodies(1);
      const [id] = await postAll(server.webhook, [body!]);
      await sink.waitFor(1, 20_000);

      const one = await hookrelay(['events', 'replay', String(id), ...local]);
      expect(one.code).toBe(0);
      expect(one.stdout).toMatch(/^delivery \d+ created for rule fwd \(pending\)$/m);
      await sink.waitFor(2, 20_000);
      expect(sink.received[1]!.rawBody.equals(body!)).toBe(true);

      const refused = await hookrelay(['events', 'replay', String(id), '--rule', 'big', ...local]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('event $in ["transfer:succeeded"]: found "order:noted0"; where result.quantity $gt 100: absent');
      const unknown = await hookrelay(['events', 'replay', String(id), '--rule', 'nope', ...local]);
      expect(unknown.stderr).toContain('No rule "nope"');
      const forced = await hookrelay(['events', 'replay', String(id), '--rule', 'big', '--force', ...local, '--json']);
      expect(forced.json.deliveries).toEqual([expect.objectContaining({ ruleId: 'big', origin: 'replay', eventId: id })]);
      await sink.waitFor(3, 20_000);

      await postAll(server.webhook, [sampleTransferSucceeded(), sampleTransferSucceeded(), sampleTransferSucceeded()]);
      await sink.waitFor(6, 20_000);
      const noFilter = await hookrelay(['events', 'replay', ...local]);
      expect(noFilter.code).toBe(1);
      expect(noFilter.stderr).toContain('--all');
      const bulk = await hookrelay(['events', 'replay', '--event', 'transfer:succeeded', ...local, '--json']);
      expect(bulk.code).toBe(0);
      expect(bulk.json).toMatchObject({ state: 'done', total: 3, processed: 3, created: 3, failed: 0 });
      await sink.waitFor(9, 20_000);
      // Without a TTY there is no progress bar: stderr stays free of control characters.
      expect(bulk.stderr).toBe('');

      const human = await hookrelay(['events', 'replay', '--all', '--rule', 'fwd', ...local]);
      expect(human.stdout.split('\n').slice(0, 3)).toEqual(['done: 4 of 4 events processed, 4 deliveries queued, 0 failed', 'route current', '  rule fwd: 4']);
      await sink.waitFor(13, 20_000);
      const dryRun = await hookrelay(['events', 'replay', String(id), '--route', 'original', '--dry-run', ...local]);
      expect(dryRun.stdout).toMatch(/^route original: the rules that routed it \(rule set [0-9a-f]{12}\), dry run: nothing is sent$/m);
      expect(dryRun.stdout).toContain(`rule fwd would send POST ${sink.url} (`);
      const bulkDryRun = await hookrelay(['events', 'replay', '--all', '--route', 'original', '--dry-run', ...local, '--json']);
      expect(bulkDryRun.json).toMatchObject({ state: 'done', created: 4, summary: { route: 'original', dryRun: true, perRule: { fwd: 4 } } });
      await new Promise((r) => setTimeout(r, 300));
      expect(sink.received).toHaveLength(13); // nothing forwarded twice by one replay

      // Edit and replay: a copy linked to the event, sent through the chosen rule although its filter does not match.
      const editedFile = join(makeTempDir(), 'edited.json');
      const editedBody = JSON.stringify({ ...sampleTransferSucceeded(), note: 'edited' });
      writeFileSync(editedFile, editedBody);
      const originalBefore = (await hookrelay(['events', 'show', String(id), ...local, '--json'])).json;
      const edited = await hookrelay(['events', 'replay', String(id), '--body', editedFile, '--rule', 'big', ...local]);
      expect(edited.code, edited.stderr).toBe(0);
      expect(edited.stdout).toMatch(new RegExp(`^edited copy stored as event \\d+ \\(edit 1 of event ${id}, validation valid\\)$`, 'm'));
      expect(edited.stdout).toContain('+ note: "edited"');
      expect(edited.stdout).toMatch(/filter does not match the edited body \(where result\.quantity \$gt 100: found \d+\): applied anyway/);
      const [, , , , , , , , , , , , , last] = await sink.waitFor(14, 20_000);
      expect(last!.rawBody.toString()).toBe(editedBody);

      // The original is as it was; the copy is listed and shown as an edited copy of it.
      const originalAfter = (await hookrelay(['events', 'show', String(id), ...local, '--json'])).json;
      expect(originalAfter.event).toEqual(originalBefore.event);
      const deliveryIds = (shown: { deliveries: { id: number }[] }) => shown.deliveries.map((d) => d.id);
      expect(deliveryIds(originalAfter)).toEqual(deliveryIds(originalBefore));
      const copyId = Number(/^edited copy stored as event (\d+)/m.exec(edited.stdout)![1]);
      const listed = await hookrelay(['events', 'list', ...local, '--limit', '1']);
      expect(listed.stdout.split('\n')[1]).toMatch(new RegExp(`^${copyId}\\s.*\\stransfer:succeeded \\(edited #${id}\\)\\s`));
      const shownCopy = await hookrelay(['events', 'show', String(copyId), ...local]);
      expect(shownCopy.stdout).toMatch(new RegExp(`^edited from\\s+event ${id} \\(edit 1, via cli, \\S+\\)$`, 'm'));
      expect(shownCopy.stdout).toMatch(/^rule set\s+[0-9a-f]{12}$/m);

      // The rule changes: route original sends to the destination of that time, route current to today's.
      writeFileSync(join(server.rulesDir, 'fwd.yaml'), `id: fwd\non: [order:noted0, transfer:succeeded]\nto:\n  url: ${sink.url}/new\n`);
      const viaOriginal = await hookrelay(['events', 'replay', String(id), '--route', 'original', ...local]);
      expect(viaOriginal.stdout).toContain(`rule fwd sends POST ${sink.url} (`);
      await sink.waitFor(15, 20_000);
      const viaCurrent = await hookrelay(['events', 'replay', String(id), '--route', 'current', ...local]);
      expect(viaCurrent.stdout).toContain(`rule fwd sends POST ${sink.url}/new (`);
      const received = await sink.waitFor(16, 20_000);
      const path = new URL(sink.url).pathname;
      expect([received[14]!.path, received[15]!.path]).toEqual([path, `${path}/new`]);
    } finally {
      await server.stop();
      await sink.close();
    }
  });

  it('lists dead-lettered deliveries and retries one, then all of a rule', async () => {
    let accept = false;
    const sink = await startWebhookSink(() => (accept ? 200 : 400));
    const server = await startServer({
      'dead.yaml': `id: dead\non: [order:noted0, order:noted1]\nto:\n  url: ${sink.url}\n`,
      'later.yaml': `id: later\non: [order:noted1]\nto:\n  url: ${sink.url}\nretry: { schedule: [1h] }\n`,
    });
    const local = ['--data-dir', server.dataDir, '--rules-dir', server.rulesDir, '--direct'];
    try {
      const ids = await postAll(server.webhook, awkwardBodies(4));
      await sink.waitFor(4, 20_000);
      const dead = await until(async () => {
        const r = await hookrelay(['deliveries', 'list', '--state', 'dead', ...local, '--json']);
        return r.json.items.length === 4 ? r.json.items : null;
      }, 30_000, 'four dead letters');
      expect(dead.map((d: { ruleId: string }) => d.ruleId)).toEqual(['dead', 'dead', 'dead', 'dead']);
      expect(dead.map((d: { eventId: number }) => d.eventId).sort()).toEqual([...ids].sort());
      const table = await hookrelay(['deliveries', 'list', '--rule', 'later', ...local]);
      expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+EVENT\s+RULE\s+STATE/);
      expect(table.stdout.match(/later\s+pending/g)).toHaveLength(2);

      const pending = await hookrelay(['deliveries', 'list', '--rule', 'later', ...local, '--json']);
      const conflict = await hookrelay(['deliveries', 'retry', String(pending.json.items[0].id), ...local]);
      expect(conflict.code).toBe(1);
      expect(conflict.stderr).toContain('already pending');

      accept = true;
      const one = await hookrelay(['deliveries', 'retry', String(dead[0].id), ...local]);
      expect(one.stdout.trim()).toBe(`delivery ${dead[0].id} is pending again, due now`);
      await sink.waitFor(5, 20_000);

      const all = await hookrelay(['deliveries', 'retry', '--rule', 'dead', ...local, '--json']);
      expect(all.json).toMatchObject({ state: 'done', total: 3, processed: 3, created: 3 });
      await sink.waitFor(8, 20_000);
      await until(async () => (await hookrelay(['deliveries', 'list', '--state', 'delivered', ...local, '--json'])).json.items.length === 4, 30_000, 'all delivered');
      const none = await hookrelay(['deliveries', 'list', '--state', 'dead', ...local]);
      expect(none.stdout).toContain('(none)');

      // Disabled, the rule holds its pending deliveries: they show as paused and why, with no next attempt time.
      writeFileSync(join(server.rulesDir, 'later.yaml'), `id: later\non: [order:noted1]\nto:\n  url: ${sink.url}\nretry: { schedule: [1h] }\nenabled: false\n`);
      const held = await hookrelay(['deliveries', 'list', '--rule', 'later', ...local]);
      const rows = held.stdout.split('\n').filter((line) => /\slater\s/.test(line));
      expect(rows).toHaveLength(2);
      for (const row of rows) expect(row).toMatch(/\slater\s+paused\s+ingest\s+0\s+-\s+-\s+rule "later" is disabled/);
      const heldEvent = (await hookrelay(['deliveries', 'list', '--rule', 'later', ...local, '--json'])).json.items[0].eventId;
      const shown = await hookrelay(['events', 'show', String(heldEvent), ...local]);
      expect(shown.stdout).toMatch(/rule later {2}paused {2}ingest {2}attempts 0 {2}paused: rule "later" is disabled: its deliveries wait until it is enabled again/);
    } finally {
      await server.stop();
      await sink.close();
    }
  });

  it('resends the stored bytes with the original signature, or signed again, through the SSRF guard', async () => {
    const sink = await startWebhookSink();
    const server = await startServer();
    try {
      const body = Buffer.from(JSON.stringify(sampleTransferSucceeded()));
      const [id] = await postAll(server.webhook, [body]);
      const env = { HOOKRELAY_ALLOW_NETWORKS: '127.0.0.1/32' };

      const original = await hookrelay(['events', 'resend', String(id), '--to', sink.url, '--data-dir', server.dataDir, '--direct'], env);
      expect(original.code).toBe(0);
      expect(original.stdout).toMatch(/^HTTP 200 in \d+ ms$/m);
      const [first] = await sink.waitFor(1, 20_000);
      expect(first!.rawBody.equals(body)).toBe(true);
      expect(verifyHmacSha256Hex([SECRET], first!.rawBody, String(first!.headers['x-service-signature']))).toBe(true);

      const secret = `whsec_${Buffer.from('resend-secret-for-tests').toString('base64')}`;
      const resigned = await hookrelay(['events', 'resend', String(id), '--to', sink.url, '--sign', 'standard-webhooks', '--secret', secret, '--data-dir', server.dataDir, '--direct', '--json'], env);
      expect(resigned.json).toMatchObject({ status: 200, error: null });
      const [, second] = await sink.waitFor(2, 20_000);
      expect(second!.rawBody.equals(body)).toBe(true);
      expect(() => new Webhook(secret).verify(second!.rawBody.toString(), second!.headers as Record<string, string>)).not.toThrow();

      const refused = await hookrelay(['events', 'resend', String(id), '--to', sink.url, '--data-dir', server.dataDir, '--direct'], { HOOKRELAY_ALLOW_NETWORKS: 'none' });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('destination 127.0.0.1 refused');
      expect(sink.received).toHaveLength(2);
    } finally {
      await server.stop();
      await sink.close();
    }
  });
});
