import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';
import { hookrelay } from './cli-harness.js';

afterAll(() => removeTempDirs());

/** A data dir holding dead deliveries of rule `kept` (in the rules dir) and of rule `removed` (no longer there). */
async function seededDataDir(): Promise<{ dataDir: string; rulesDir: string }> {
  const dataDir = makeTempDir();
  const rulesDir = makeTempDir('hookrelay-rules-');
  writeFileSync(join(rulesDir, 'kept.yaml'), 'id: kept\non: [transfer:succeeded]\nto:\n  url: http://127.0.0.1:9/kept\n');
  const store = new SqliteStore({ dataDir, durability: 'normal' });
  try {
    for (const [i, ruleId] of ['kept', 'removed', 'removed', 'kept', 'removed'].entries()) {
      await store.saveEvent({
        source: 'checkout', event: 'transfer:succeeded', transferId: `t-${i}`, checkoutId: null, email: null, walletAddress: null, validation: 'valid',
        receivedAt: Date.now(), headers: {}, body: Buffer.from(`{"n":${i}}`),
        deliveries: [{ ruleId, ruleSetHash: 'seeded', body: null, contentType: 'application/json', deadReason: 'seeded' }],
      });
    }
  } finally {
    await store.close();
  }
  return { dataDir, rulesDir };
}

describe('deliveries retry with dead letters of a removed rule (local mode)', { timeout: 60_000 }, () => {
  it('a bulk retry queues only what today\'s rules send and reports the rest as skipped, with why', async () => {
    const { dataDir, rulesDir } = await seededDataDir();
    const local = ['--data-dir', dataDir, '--rules-dir', rulesDir];
    const all = await hookrelay(['deliveries', 'retry', '--all', ...local]);
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout).toContain('done: 2 of 2 dead deliveries processed, 2 deliveries queued, 0 failed');
    expect(all.stdout).toContain('skipped 3 dead deliveries: rule "removed" is no longer in the rule set, so a retry would be dead-lettered again at once ("rule removed")');

    const json = await hookrelay(['deliveries', 'retry', '--all', ...local, '--json']);
    expect(json.json).toMatchObject({ state: 'done', total: 0, created: 0, summary: { skipped: [{ ruleId: 'removed', count: 3, reason: 'rule_removed' }] } });
    const dead = await hookrelay(['deliveries', 'list', '--state', 'dead', ...local, '--json']);
    expect(dead.json.items.map((d: { ruleId: string; attempts: number }) => [d.ruleId, d.attempts])).toEqual([['removed', 0], ['removed', 0], ['removed', 0]]);
  });

  it('a single retry of such a delivery is refused with the reason, and the delivery stays as it was', async () => {
    const { dataDir, rulesDir } = await seededDataDir();
    const local = ['--data-dir', dataDir, '--rules-dir', rulesDir];
    const dead = await hookrelay(['deliveries', 'list', '--rule', 'removed', ...local, '--json']);
    const id = dead.json.items[0].id as number;
    const refused = await hookrelay(['deliveries', 'retry', String(id), ...local]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`Delivery ${id} is not retried: rule "removed" is no longer in the rule set`);
    const after = await hookrelay(['deliveries', 'list', '--rule', 'removed', ...local, '--json']);
    expect(after.json.items.find((d: { id: number }) => d.id === id)).toMatchObject({ state: 'dead', attempts: 0 });
    const kept = await hookrelay(['deliveries', 'list', '--rule', 'kept', ...local, '--json']);
    expect((await hookrelay(['deliveries', 'retry', String(kept.json.items[0].id), ...local])).code).toBe(0);
  });
});
