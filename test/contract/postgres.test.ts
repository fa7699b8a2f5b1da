import { afterAll, beforeAll } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../helpers/postgres.js';
import { storeContract } from './store-contract.js';

let database: TestDatabase;

/** Settings of a small test node: few connections, the server is shared. */
export const TEST_POOL = { poolSize: 3, statementTimeoutMs: 10_000, lockTimeoutMs: 2_000, connectTimeoutMs: 3_000, notifications: true };

describeWithPostgres('Store contract: PostgreSQL', () => {
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());
  // Every test on a new, empty schema of this file's database.
  storeContract({ open: async () => PostgresStore.open({ url: await database.freshSchemaUrl(), ...TEST_POOL }) });
});
