import type pg from 'pg';
import { driftKey, type DriftFilter, type ObservedSchema, type SchemaLearning, type SchemaLearningSave, type StoredDrift } from '../schema-store.js';
import { toObservedSchema, toStoredDrift, type DriftRow, type ObservedSchemaRow } from '../schema-rows.js';

interface LearningRow {
  generation: string;
  position_tx: string | null;
  position_id: string | null;
  from_start: boolean;
}

const UPSERT_SCHEMA = `
  INSERT INTO observed_schemas (source, event, events_seen, first_seen, last_seen, truncated, fields, updated_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
  ON CONFLICT (source, event) DO UPDATE SET events_seen = excluded.events_seen, first_seen = excluded.first_seen,
    last_seen = excluded.last_seen, truncated = excluded.truncated, fields = excluded.fields, updated_at = excluded.updated_at`;
// The first save creates the row; later ones move it on only while the generation is the learner's. The
// row lock also makes two would-be learners' saves take turns.
const CLAIM_GENERATION = `
  INSERT INTO schema_learning (id, generation, position_tx, position_id, from_start, updated_at) VALUES (1, $1, $2, $3, false, $4)
  ON CONFLICT (id) DO UPDATE SET position_tx = excluded.position_tx, position_id = excluded.position_id, from_start = false, updated_at = excluded.updated_at
  WHERE schema_learning.generation = excluded.generation`;
const INSERT_DRIFT = `
  INSERT INTO schema_drifts (source, event, drift_key, kind, path, before, after, event_id, detected_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (source, event, drift_key) DO NOTHING RETURNING *`;
const RESTART = `
  INSERT INTO schema_learning (id, generation, position_tx, position_id, from_start, updated_at) VALUES (1, 1, NULL, NULL, true, $1)
  ON CONFLICT (id) DO UPDATE SET generation = schema_learning.generation + 1, position_tx = NULL, position_id = NULL, from_start = true, updated_at = excluded.updated_at
  RETURNING generation`;

/** The observed schemas, the learner's position and the drifts (migration 011). */
export class SchemaQueries {
  constructor(private readonly db: pg.Pool) {}

  async load(): Promise<SchemaLearning | null> {
    const row = (await this.db.query<LearningRow>('SELECT generation, position_tx, position_id, from_start FROM schema_learning WHERE id = 1')).rows[0];
    if (!row) return null;
    const schemas = (await this.db.query<ObservedSchemaRow>('SELECT * FROM observed_schemas ORDER BY source, event')).rows;
    return {
      generation: Number(row.generation),
      position: row.position_id === null ? null : { tx: row.position_tx, id: Number(row.position_id) },
      fromStart: row.from_start,
      schemas: schemas.map(toObservedSchema),
    };
  }

  /** In the caller's transaction. */
  async saveLearning(client: pg.PoolClient, save: SchemaLearningSave): Promise<{ saved: boolean; drifts: StoredDrift[] }> {
    const moved = (await client.query(CLAIM_GENERATION, [save.generation, save.position.tx, save.position.id, save.now])).rowCount === 1;
    if (!moved) return { saved: false, drifts: [] };
    for (const s of save.schemas) await client.query(UPSERT_SCHEMA, [s.source, s.event, s.eventsSeen, s.firstSeen, s.lastSeen, s.truncated, JSON.stringify(s.fields), save.now]);
    const drifts: StoredDrift[] = [];
    for (const d of save.drifts) {
      const row = (await client.query<DriftRow>(INSERT_DRIFT, [d.source, d.event, driftKey(d), d.kind, d.path, JSON.stringify(d.before), JSON.stringify(d.after), d.eventId, d.detectedAt])).rows[0];
      if (row) drifts.push(toStoredDrift(row));
    }
    return { saved: true, drifts };
  }

  /** In the caller's transaction. */
  async restartLearning(client: pg.PoolClient, now: number): Promise<number> {
    await client.query('DELETE FROM observed_schemas');
    return Number((await client.query<{ generation: string }>(RESTART, [now])).rows[0]!.generation);
  }

  async list(filter: { source?: string; event?: string }): Promise<ObservedSchema[]> {
    const rows = await this.db.query<ObservedSchemaRow>(
      'SELECT * FROM observed_schemas WHERE ($1::text IS NULL OR source = $1) AND ($2::text IS NULL OR event = $2) ORDER BY source, event',
      [filter.source ?? null, filter.event ?? null],
    );
    return rows.rows.map(toObservedSchema);
  }

  async drifts(filter: DriftFilter): Promise<StoredDrift[]> {
    const rows = await this.db.query<DriftRow>(
      'SELECT * FROM schema_drifts WHERE ($1::text IS NULL OR source = $1) AND ($2::text IS NULL OR event = $2) AND id < $3 ORDER BY id DESC LIMIT $4',
      [filter.source ?? null, filter.event ?? null, filter.before ?? Number.MAX_SAFE_INTEGER, filter.limit],
    );
    return rows.rows.map(toStoredDrift);
  }
}
