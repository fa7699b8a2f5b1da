import { afterAll, describe } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';
import type { StoreFactory } from './contract-helpers.js';
import { ROLE_CONTRACTS } from './role-contracts.js';

afterAll(() => removeTempDirs());

describe('Store contract: SQLite', () => {
  const factory: StoreFactory = {
    open: async (clock) => new SqliteStore({ dataDir: makeTempDir(), durability: 'normal', ...(clock && { clock }) }),
    databaseClock: false,
  };
  for (const contract of ROLE_CONTRACTS) contract(factory);
});
