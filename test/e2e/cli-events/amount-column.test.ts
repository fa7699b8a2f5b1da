import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';
import { ADMIN_TOKEN, hookrelay, postAll, startServer } from './cli-harness.js';

afterAll(() => removeTempDirs());

/** The table's cell under `header` in the row whose first cell is `id`. */
function cell(table: string, header: string, id: number): string {
  const [head, ...rows] = table.split('\n');
  const start = head!.indexOf(header);
  const next = head!.slice(start + header.length).search(/\S/) + start + header.length;
  const row = rows.find((line) => line.startsWith(`${id} `))!;
  return row.slice(start, next).trim();
}

describe('events list shows the amount (result.totalPriceUsd)', { timeout: 120_000 }, () => {
  it('in its table and JSON, on a data dir and through the API; blank for an event without one, kept by export and import', async () => {
    const server = await startServer();
    try {
      const [paid, cheap, other] = await postAll(server.webhook, [
        sampleTransferSucceeded({ quantity: 2, unitPriceUsd: 52.175 }),
        sampleTransferSucceeded({ quantity: 1, unitPriceUsd: 12.48 }),
        { event: 'order:noted', result: { id: 'no-amount' } },
      ]);
      const local = ['--data-dir', server.dataDir, '--rules-dir', server.rulesDir, '--direct'];

      const table = await hookrelay(['events', 'list', ...local]);
      expect(table.code).toBe(0);
      expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+RECEIVED\s+SOURCE\s+EVENT\s+AMOUNT USD\s+TRANSFER ID/);
      expect([paid!, cheap!, other!].map((id) => cell(table.stdout, 'AMOUNT USD', id))).toEqual(['104.37', '12.50', '-']);

      const json = await hookrelay(['events', 'list', ...local, '--json']);
      expect(json.json.items.map((e: { totalPriceUsd: number | null }) => e.totalPriceUsd)).toEqual([null, 12.5, 104.37]);

      const remote = await hookrelay(['events', 'list', '--url', server.url], { HOOKRELAY_ADMIN_TOKEN: ADMIN_TOKEN });
      expect(remote.stdout).toBe(table.stdout);
      const shown = await hookrelay(['events', 'show', String(paid), ...local]);
      expect(shown.stdout).toMatch(/^amount usd\s+104\.37$/m);

      const file = join(makeTempDir(), 'events.ndjson');
      expect((await hookrelay(['events', 'export', ...local, '-o', file])).code).toBe(0);
      const fresh = makeTempDir();
      expect((await hookrelay(['events', 'import', file, '--data-dir', fresh])).code).toBe(0);
      const imported = await hookrelay(['events', 'list', '--data-dir', fresh, '--json']);
      expect(imported.json.items.map((e: { totalPriceUsd: number | null }) => e.totalPriceUsd)).toEqual([null, 12.5, 104.37]);
    } finally {
      await server.stop();
    }
  });
});
