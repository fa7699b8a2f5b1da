import { afterAll, describe } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';
import { storeContract } from './store-contract.js';
import { storeCopyContract } from './store-copy-contract.js';

afterAll(() => removeTempDirs());

describe('Store contract: SQLite', () => {
  const factory = { open: async () => new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' as const }) };
  storeContract(factory);
  storeCopyContract(factory);
});
