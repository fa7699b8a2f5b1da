import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';
import { awkwardBodies, hookrelay, postAll, startServer } from './cli-harness.js';

afterAll(() => removeTempDirs());

describe('events list|show|export|import on a data dir, beside a running server', { timeout: 120_000 }, () => {
  it('lists and shows events, and an export imported into a fresh data dir is byte-exact', async () => {
    const server = await startServer();
    try {
      const bodies = [...awkwardBodies(6), Buffer.from(JSON.stringify(sampleTransferSucceeded())), Buffer.from(JSON.stringify(sampleTransferSucceeded()))];
      const ids = await postAll(server.webhook, bodies);
      const local = ['--data-dir', server.dataDir, '--rules-dir', server.rulesDir, '--direct'];

      const listed = await hookrelay(['events', 'list', ...local, '--json']);
      expect(listed.code).toBe(0);
      expect(listed.json.items.map((e: { id: number }) => e.id)).toEqual([...ids].reverse());
      expect(listed.json.items[0]).toMatchObject({ source: 'checkout', event: 'transfer:succeeded', validation: 'valid', receivedCount: 1 });
      expect(listed.json.items[0].receivedAt).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);

      const table = await hookrelay(['events', 'list', ...local, '--event', 'order:noted1']);
      expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+RECEIVED\s+SOURCE\s+EVENT/);
      expect(table.stdout.match(/order:noted1/g)).toHaveLength(3);
      expect(table.stdout).not.toContain('order:noted0');

      const lastHour = await hookrelay(['events', 'list', ...local, '--from', '1h', '--json']);
      expect(lastHour.json.items).toHaveLength(8);
      const before = await hookrelay(['events', 'list', ...local, '--to', '2020-01-01', '--json']);
      expect(before.json.items).toEqual([]);

      const first = await hookrelay(['events', 'list', ...local, '--limit', '3', '--json']);
      const second = await hookrelay(['events', 'list', ...local, '--limit', '3', '--cursor', first.json.nextCursor, '--json']);
      expect([...first.json.items, ...second.json.items].map((e: { id: number }) => e.id)).toEqual([...ids].reverse().slice(0, 6));

      const shown = await hookrelay(['events', 'show', String(ids[0]), ...local, '--json']);
      expect(Buffer.from(shown.json.event.bodyBase64, 'base64').equals(bodies[0]!)).toBe(true);
      expect(shown.json.event.headers['x-service-signature']).toMatch(/^[0-9a-f]{64}$/);
      expect(shown.json.deliveries).toEqual([]);
      expect(shown.json.event.importedAt).toBeNull();
      const human = await hookrelay(['events', 'show', String(ids[0]), ...local]);
      expect(human.stdout).toContain(bodies[0]!.toString('utf8'));
      expect(human.stdout).not.toMatch(/^imported /m);

      const file = join(makeTempDir(), 'events.ndjson');
      const exported = await hookrelay(['events', 'export', ...local, '-o', file]);
      expect(exported.code).toBe(0);
      expect(exported.stderr).toContain('exported 8 events');
      const text = readFileSync(file, 'utf8');
      expect(text.trimEnd().split('\n')).toHaveLength(8);
      // A time range starts at the first event received in it: all of the last hour, none from a future start.
      const sinceHour = await hookrelay(['events', 'export', ...local, '--from', '1h']);
      expect(sinceHour.stdout).toBe(text);
      const sinceFuture = await hookrelay(['events', 'export', ...local, '--from', '2999-01-01T00:00:00Z']);
      expect(sinceFuture.code).toBe(0);
      expect(sinceFuture.stdout).toBe('');

      const fresh = makeTempDir();
      const imported = await hookrelay(['events', 'import', file, '--data-dir', fresh, '--json']);
      expect(imported.code).toBe(0);
      expect(imported.json).toEqual({ imported: 8, duplicates: 0, seenBefore: 0, interrupted: false, unconfiguredSources: {} });
      const again = await hookrelay(['events', 'import', file, '--data-dir', fresh]);
      expect(again.stdout.trim()).toBe('imported 0, duplicates 8, seen before 0');
      // An imported event keeps its receipt time and says when it was imported (its retention age counts from then).
      const importedId = (await hookrelay(['events', 'list', '--data-dir', fresh, '--limit', '1', '--json'])).json.items[0].id;
      const importedShown = await hookrelay(['events', 'show', String(importedId), '--data-dir', fresh, '--json']);
      expect(importedShown.json.event.receivedAt).toBe(listed.json.items[0].receivedAt);
      expect(Date.parse(importedShown.json.event.importedAt)).toBeGreaterThanOrEqual(Date.parse(importedShown.json.event.receivedAt));
      expect(Date.now() - Date.parse(importedShown.json.event.importedAt)).toBeLessThan(60_000);
      const importedHuman = await hookrelay(['events', 'show', String(importedId), '--data-dir', fresh]);
      expect(importedHuman.stdout).toMatch(new RegExp(`^imported\\s+${importedShown.json.event.importedAt}$`, 'm'));

      const reexported = await hookrelay(['events', 'export', '--data-dir', fresh]);
      expect(reexported.stdout).toBe(text);
      const store = new SqliteStore({ dataDir: fresh, durability: 'normal' });
      try {
        const stored = await store.listEventsForExport({}, 100);
        expect(stored.map((e) => e.body.toString('hex'))).toEqual(bodies.map((b) => b.toString('hex')));
      } finally {
        await store.close();
      }

      const filtered = await hookrelay(['events', 'export', ...local, '--event', 'order:noted0']);
      expect(filtered.stdout.trimEnd().split('\n').map((line) => JSON.parse(line).event)).toEqual(['order:noted0', 'order:noted0', 'order:noted0']);
    } finally {
      await server.stop();
    }
  });

  it('refuses a data dir without a database, a bad filter, and an import line that is not an export record', async () => {
    const empty = makeTempDir();
    const missing = await hookrelay(['events', 'list', '--data-dir', empty]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/No hookrelay database in .*--data-dir/);

    const file = join(makeTempDir(), 'bad.ndjson');
    const good = JSON.stringify({
      format: 'hookrelay.event.v1', source: 'checkout', event: 'x:y', transferId: 'r1', validation: 'unrecognised', checkoutId: null, email: null, walletAddress: null,
      receivedAt: '2024-01-01T00:00:00.000Z', lastReceivedAt: '2024-01-01T00:00:00.000Z', receivedCount: 1, headers: {},
      bodyBase64: Buffer.from('{"event":"x:y","result":{"id":"r1"}}').toString('base64'),
    });
    const mismatched = good.replace('"transferId":"r1"', '"transferId":"r2"');
    writeFileSync(file, `${good}\n${mismatched}\n`);
    const dir = makeTempDir();
    const result = await hookrelay(['events', 'import', file, '--data-dir', dir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('line 2:');
    expect(result.stderr).toContain('imported 1, duplicates 0, seen before 0 before the error');

    // Another instance's source is imported, and said to be one this instance does not receive.
    const elsewhere = join(makeTempDir(), 'elsewhere.ndjson');
    writeFileSync(elsewhere, `${good.replace('"source":"checkout"', '"source":"elsewhere"')}\n`);
    const other = await hookrelay(['events', 'import', elsewhere, '--data-dir', makeTempDir()]);
    expect([other.code, other.stdout]).toEqual([0, 'imported 1, duplicates 0, seen before 0\nof them from sources not configured here: "elsewhere" (1)\n']);

    const badTime = await hookrelay(['events', 'list', '--data-dir', dir, '--from', 'yesterday-ish']);
    expect(badTime.code).toBe(1);
    expect(badTime.stderr).toContain('--from "yesterday-ish" is not a time');
  });
});
