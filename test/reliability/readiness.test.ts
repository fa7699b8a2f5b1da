import { join } from 'node:path';
import pg from 'pg';
import { request } from 'undici';
import { afterAll, afterEach, expect, it } from 'vitest';
import Database from '../../src/sqlite-driver.js';
import { DATABASE_FILE } from '../../src/store/sqlite/sqlite-store.js';
import { describeEachBackend, type TestBackend } from '../helpers/backends.js';
import { startTestReceiver, type TestReceiver } from '../helpers/receiver.js';
import { eventually, rulesDirWith } from '../helpers/rules.js';
import { removeTempDirs } from '../helpers/temp-dir.js';

// /readyz answers from what the node knows, on both backends: no webhook traffic is needed for it to notice
// that commits cannot complete (the background probe), nor to notice they can again.

const running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const item of running.splice(0).reverse()) await item.close();
});
afterAll(() => removeTempDirs());

/** /readyz's status; it must answer within a second, whatever the store is doing. */
async function readyz(app: TestReceiver): Promise<number> {
  const response = await request(`${app.url}/readyz`, { signal: AbortSignal.timeout(1_000) });
  await response.body.text();
  return response.statusCode;
}

/** Holds what blocks every commit of the receiver's store (a write lock elsewhere); returns its release. */
async function blockCommits(backend: TestBackend, app: TestReceiver, url: string | undefined): Promise<() => Promise<void>> {
  if (backend.name === 'SQLite') {
    const locker = new Database(join(app.dataDir, DATABASE_FILE));
    locker.exec('BEGIN IMMEDIATE');
    return async () => {
      locker.exec('ROLLBACK');
      locker.close();
    };
  }
  const locker = new pg.Client({ connectionString: url });
  await locker.connect();
  await locker.query('BEGIN');
  await locker.query('LOCK TABLE events IN ACCESS EXCLUSIVE MODE');
  return async () => {
    await locker.query('ROLLBACK');
    await locker.end();
  };
}

describeEachBackend('/readyz from knowledge', (backend) => {
  it('turns 503 while commits cannot complete and 200 once they can, without webhook traffic, answering at once throughout', async () => {
    const storage = await backend.storage();
    const database = storage.database as Record<string, unknown> | undefined;
    const app = await startTestReceiver({
      ...storage,
      ...(database && { database: { ...database, lockTimeoutMs: 1_000, commitTimeoutMs: 1_000 } }),
      rulesDir: rulesDirWith({}),
      retention: { enabled: false },
    });
    running.push(app);
    expect(await readyz(app)).toBe(200);

    const release = await blockCommits(backend, app, database?.url as string | undefined);
    try {
      await eventually(async () => (await readyz(app)) === 503, 15_000, '/readyz 503 while commits are blocked');
      const reasons = await request(`${app.adminUrl}/admin/api/readiness`, { headers: { authorization: `Bearer ${app.adminToken}` }, signal: AbortSignal.timeout(1_000) });
      const report = (await reasons.body.json()) as { status: string; checks: { startup: string; store: string } };
      expect(report).toMatchObject({ status: 'not_ready', checks: { startup: 'complete' } });
      expect(report.checks.store).not.toBe('ok');
    } finally {
      await release();
    }
    await eventually(async () => (await readyz(app)) === 200, 15_000, '/readyz 200 once commits complete');
  });
});
