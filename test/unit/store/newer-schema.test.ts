import { join } from 'node:path';
import Database from '../../../src/sqlite-driver.js';
import { afterAll, describe, expect, it } from 'vitest';
import { HookrelayError } from '../../../src/errors.js';
import { listMigrations, migrate } from '../../../src/store/sqlite/migrate.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';

afterAll(removeTempDirs);

describe('a SQLite database written by a newer hookrelay', () => {
  it('is refused with both versions named, and left as it was', () => {
    const db = new Database(join(makeTempDir(), 'events.sqlite'));
    try {
      migrate(db);
      db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'from_the_future', 'later')").run();
      const known = listMigrations().at(-1)!.version;
      let refusal: unknown;
      try {
        migrate(db);
      } catch (err) {
        refusal = err;
      }
      expect(refusal).toBeInstanceOf(HookrelayError);
      expect(refusal).toMatchObject({
        code: 'invalid_config',
        message: `The database has schema version 999, newer than this hookrelay knows (${known}). Upgrade hookrelay or use another data dir.`,
        details: { databaseVersion: 999, knownVersion: known },
      });
      expect(db.prepare('SELECT count(*) AS n FROM schema_migrations').get()).toEqual({ n: known + 1 });
    } finally {
      db.close();
    }
  });
});
