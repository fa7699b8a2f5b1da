import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { NewDrift, ObservedSchema } from '../../src/store/schema-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { createTestDatabase, describeWithPostgres, TEST_POOL, type TestDatabase } from '../helpers/postgres.js';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';

const schema = (eventsSeen: number): ObservedSchema => ({
  source: 'checkout',
  event: 'transfer:succeeded',
  eventsSeen,
  firstSeen: 1_000,
  lastSeen: 2_000,
  truncated: 0,
  fields: [{ path: 'result.id', types: { string: eventsSeen }, present: eventsSeen, firstSeen: 1_000, lastSeen: 2_000, example: '"abc"', streak: eventsSeen }],
});

const drift = (path: string, eventId: number): NewDrift => ({ source: 'checkout', event: 'transfer:succeeded', kind: 'field_added', path, before: [], after: ['string'], eventId, detectedAt: 3_000 });

function schemaStoreContract(open: () => Promise<Store>): void {
  it('saves the learner state, schemas and drifts in one step and loads them back', async () => {
    const store = await open();
    try {
      expect(await store.loadSchemaLearning()).toBeNull();
      const first = await store.saveSchemaLearning({ generation: 0, position: { tx: null, id: 5 }, schemas: [schema(3)], drifts: [drift('result.x', 4)], now: 10 });
      expect(first.saved).toBe(true);
      expect(first.drifts).toMatchObject([{ path: 'result.x', eventId: 4, kind: 'field_added', after: ['string'] }]);
      const loaded = await store.loadSchemaLearning();
      expect(loaded).toMatchObject({ generation: 0, position: { id: 5 }, fromStart: false });
      expect(loaded!.schemas).toEqual([schema(3)]);
      expect(await store.listObservedSchemas({ event: 'transfer:succeeded' })).toEqual([schema(3)]);
      expect(await store.listObservedSchemas({ source: 'other' })).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('records each drift once, with the first event that showed it', async () => {
    const store = await open();
    try {
      await store.saveSchemaLearning({ generation: 0, position: { tx: null, id: 1 }, schemas: [], drifts: [drift('result.x', 1)], now: 10 });
      const again = await store.saveSchemaLearning({ generation: 0, position: { tx: null, id: 2 }, schemas: [], drifts: [drift('result.x', 2), drift('result.y', 2)], now: 11 });
      expect(again.drifts.map((d) => d.path)).toEqual(['result.y']);
      const listed = await store.listDrifts({ limit: 10 });
      expect(listed.map((d) => [d.path, d.eventId])).toEqual([['result.y', 2], ['result.x', 1]]);
      expect(await store.listDrifts({ limit: 10, before: listed[0]!.id })).toHaveLength(1);
      expect(await store.listDrifts({ limit: 10, event: 'other' })).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('a restart (backfill) forgets the schemas, keeps the drifts, and refuses the old generation', async () => {
    const store = await open();
    try {
      await store.saveSchemaLearning({ generation: 0, position: { tx: null, id: 1 }, schemas: [schema(1)], drifts: [drift('result.x', 1)], now: 10 });
      const generation = await store.restartSchemaLearning();
      expect(generation).toBe(1);
      expect(await store.loadSchemaLearning()).toMatchObject({ generation: 1, position: null, fromStart: true, schemas: [] });
      expect((await store.saveSchemaLearning({ generation: 0, position: { tx: null, id: 9 }, schemas: [schema(9)], drifts: [], now: 30 })).saved).toBe(false);
      expect(await store.listObservedSchemas({})).toEqual([]);
      expect(await store.listDrifts({ limit: 10 })).toHaveLength(1);
      expect((await store.saveSchemaLearning({ generation: 1, position: { tx: null, id: 9 }, schemas: [schema(2)], drifts: [], now: 30 })).saved).toBe(true);
      expect(await store.loadSchemaLearning()).toMatchObject({ generation: 1, position: { id: 9 }, fromStart: false });
    } finally {
      await store.close();
    }
  });
}

afterAll(() => removeTempDirs());

describe('Schema store contract: SQLite', () => {
  schemaStoreContract(async () => new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' as const }));
});

let database: TestDatabase;
describeWithPostgres('Schema store contract: PostgreSQL', () => {
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());
  schemaStoreContract(async () => PostgresStore.open({ url: await database.freshSchemaUrl(), ...TEST_POOL }));
});
