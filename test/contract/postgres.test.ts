import { afterAll, beforeAll } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { createTestDatabase, describeWithPostgres, TEST_POOL, type TestDatabase } from '../helpers/postgres.js';
import type { StoreFactory } from './contract-helpers.js';
import { ROLE_CONTRACTS } from './role-contracts.js';

let database: TestDatabase;

describeWithPostgres('Store contract: PostgreSQL', () => {
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());
  // Every test on a new, empty schema of this file's database.
  const factory: StoreFactory = {
    open: async (clock) => PostgresStore.open({ url: await database.freshSchemaUrl(), ...TEST_POOL, ...(clock && { clock }) }),
    databaseClock: true,
  };
  for (const contract of ROLE_CONTRACTS) contract(factory);
});
