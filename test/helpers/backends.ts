import { afterAll, beforeAll, describe } from 'vitest';
import type { Config } from '../../src/config.js';
import { createTestDatabase, describeWithPostgres, TEST_POOL, type TestDatabase } from './postgres.js';

export type ConfigOverrides = Partial<Record<keyof Config, unknown>>;

export interface TestBackend {
  name: 'SQLite' | 'PostgreSQL';
  /** Settings that give a receiver fresh, empty storage on this backend (SQLite: the receiver's temp data dir). */
  storage(): Promise<ConfigOverrides>;
}

const SQLITE: TestBackend = { name: 'SQLite', storage: async () => ({}) };

/**
 * Runs `body` once per store backend: SQLite always, PostgreSQL on a database of this file's own (a fresh
 * schema per receiver) where the test server answers; see describeWithPostgres for when it is skipped.
 */
export function describeEachBackend(title: string, body: (backend: TestBackend) => void): void {
  describe(`${title} (SQLite)`, () => body(SQLITE));
  describeWithPostgres(`${title} (PostgreSQL)`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await createTestDatabase();
    });
    afterAll(() => database.drop());
    body({ name: 'PostgreSQL', storage: async () => ({ database: { ...TEST_POOL, url: await database.freshSchemaUrl() } }) });
  });
}
