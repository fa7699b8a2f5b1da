import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../src/samples/transfer-succeeded.js';
import { listMigrations, migrate } from '../../src/store/sqlite/migrate.js';
import { openDatabase } from '../../src/store/sqlite/sqlite-store.js';
import { runCli, startServeProcess } from '../helpers/cli-process.js';
import { postSigned, send } from '../helpers/http.js';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';

afterAll(() => removeTempDirs());

const OLD_SECRET = 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90';
const OLD_TOKEN = 'hra_generated-by-an-earlier-version-0123456789';

async function showSecret(dataDir: string, args: string[] = []): Promise<string> {
  const shown = runCli(['secrets', 'show', ...args], { env: { HOOKRELAY_DATA_DIR: dataDir } });
  expect((await shown.exited).code, shown.stderr()).toBe(0);
  return shown.stdout().trim();
}

describe('a SQLite data dir from a version that kept generated values in files', { timeout: 120_000 }, () => {
  it('keeps using its secret and admin token after the upgrade, and the database keeps them from then on', async () => {
    const dataDir = makeTempDir();
    // The data dir an earlier version left: its database at schema 009, the generated values in files.
    const db = openDatabase({ dataDir, durability: 'normal' });
    migrate(db, listMigrations().filter((m) => m.version <= 9));
    db.close();
    writeFileSync(join(dataDir, 'checkout.secret'), `${OLD_SECRET}\n`, { mode: 0o600 });
    writeFileSync(join(dataDir, 'admin.token'), `${OLD_TOKEN}\n`, { mode: 0o600 });

    const env = { HOOKRELAY_DATA_DIR: dataDir, HOOKRELAY_RULES_DIR: makeTempDir() };
    const first = await startServeProcess(env);
    try {
      expect(first.stderr()).not.toContain('generated');
      expect((await postSigned(`${first.url}/webhooks/checkout`, sampleTransferSucceeded(), OLD_SECRET)).status).toBe(200);
      expect((await send(`${first.url}/admin/api/events`, { headers: { authorization: `Bearer ${OLD_TOKEN}` } })).status).toBe(200);
    } finally {
      first.child.kill('SIGTERM');
      await first.exited;
    }
    expect(readFileSync(join(dataDir, 'checkout.secret'), 'utf8')).toBe(`${OLD_SECRET}\n`);

    // The database now holds them: without the files the CLI and the next start still use the same values.
    rmSync(join(dataDir, 'checkout.secret'));
    rmSync(join(dataDir, 'admin.token'));
    expect(await showSecret(dataDir)).toBe(OLD_SECRET);
    expect(await showSecret(dataDir, ['--admin-token'])).toBe(OLD_TOKEN);
    const second = await startServeProcess(env);
    try {
      expect(second.stderr()).not.toContain('generated');
      expect((await postSigned(`${second.url}/webhooks/checkout`, sampleTransferSucceeded(), OLD_SECRET)).status).toBe(200);
      expect((await send(`${second.url}/admin/api/events`, { headers: { authorization: `Bearer ${OLD_TOKEN}` } })).status).toBe(200);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
    // The readable copies are written again, as on a first start.
    expect(readFileSync(join(dataDir, 'checkout.secret'), 'utf8')).toBe(`${OLD_SECRET}\n`);
    expect(readFileSync(join(dataDir, 'admin.token'), 'utf8')).toBe(`${OLD_TOKEN}\n`);
  });
});
