import { afterAll, beforeAll } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { createTestDatabase, describeWithPostgres, TEST_POOL, type TestDatabase } from '../helpers/postgres.js';
import { storeContract } from './store-contract.js';
import { storeCopyContract } from './store-copy-contract.js';

let database: TestDatabase;


describeWithPostgres('Store contract: PostgreSQL', () => {
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());
  // Every test on a new, empty schema of this file's database.
  const factory = { open: async () => PostgresStore.open({ url: await database.freshSchemaUrl(), ...TEST_POOL }) };
  storeContract(factory);
  storeCopyContract(factory);
});
