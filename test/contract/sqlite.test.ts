import { afterAll, describe } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';
import { storeContract } from './store-contract.js';

afterAll(() => removeTempDirs());

describe('Store contract: SQLite', () => {
  storeContract({ open: async () => new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' }) });
});
