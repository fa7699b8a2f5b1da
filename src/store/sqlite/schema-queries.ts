import type { BetterSqlite3 } from '../../sqlite-driver.js';
import { driftKey, type DriftFilter, type ObservedSchema, type SchemaLearning, type SchemaLearningSave, type StoredDrift } from '../schema-store.js';
import { toObservedSchema, toStoredDrift, type DriftRow, type ObservedSchemaRow } from '../schema-rows.js';

interface LearningRow {
  generation: number;
  position_tx: string | null;
  position_id: number | null;
  from_start: number;
}

/** The observed schemas, the learner's position and the drifts (migration 016), synchronous. */
export class SchemaQueries {
  private readonly learning;
  private readonly schemas;
  private readonly upsertSchema;
  private readonly claimGeneration;
  private readonly insertDrift;
  private readonly restart;
  private readonly clearSchemas;
  private readonly save;

  constructor(private readonly db: BetterSqlite3.Database) {
    this.learning = db.prepare<[], LearningRow>('SELECT generation, position_tx, position_id, from_start FROM schema_learning WHERE id = 1');
    this.schemas = db.prepare<[], ObservedSchemaRow>('SELECT * FROM observed_schemas ORDER BY source, event');
    this.upsertSchema = db.prepare(`
      INSERT INTO observed_schemas (source, event, events_seen, first_seen, last_seen, truncated, fields, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (source, event) DO UPDATE SET events_seen = excluded.events_seen, first_seen = excluded.first_seen,
        last_seen = excluded.last_seen, truncated = excluded.truncated, fields = excluded.fields, updated_at = excluded.updated_at`);
    // The first save creates the row; later ones move it on only while the generation is the learner's.
    this.claimGeneration = db.prepare(`
      INSERT INTO schema_learning (id, generation, position_tx, position_id, from_start, updated_at) VALUES (1, ?, ?, ?, 0, ?)
      ON CONFLICT (id) DO UPDATE SET position_tx = excluded.position_tx, position_id = excluded.position_id, from_start = 0, updated_at = excluded.updated_at
      WHERE schema_learning.generation = excluded.generation`);
    this.insertDrift = db.prepare<unknown[], DriftRow>(`
      INSERT INTO schema_drifts (source, event, drift_key, kind, path, before, after, event_id, detected_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (source, event, drift_key) DO NOTHING RETURNING *`);
    this.restart = db.prepare<[number], { generation: number }>(`
      INSERT INTO schema_learning (id, generation, position_tx, position_id, from_start, updated_at) VALUES (1, 1, NULL, NULL, 1, ?)
      ON CONFLICT (id) DO UPDATE SET generation = schema_learning.generation + 1, position_tx = NULL, position_id = NULL, from_start = 1, updated_at = excluded.updated_at
      RETURNING generation`);
    this.clearSchemas = db.prepare('DELETE FROM observed_schemas');
    this.save = db.transaction((save: SchemaLearningSave): { saved: boolean; drifts: StoredDrift[] } => {
      const moved = this.claimGeneration.run(save.generation, save.position.tx, save.position.id, save.now).changes === 1;
      if (!moved) return { saved: false, drifts: [] };
      for (const s of save.schemas) this.upsertSchema.run(s.source, s.event, s.eventsSeen, s.firstSeen, s.lastSeen, s.truncated, JSON.stringify(s.fields), save.now);
      const drifts: StoredDrift[] = [];
      for (const d of save.drifts) {
        const row = this.insertDrift.get(d.source, d.event, driftKey(d), d.kind, d.path, JSON.stringify(d.before), JSON.stringify(d.after), d.eventId, d.detectedAt);
        if (row) drifts.push(toStoredDrift(row));
      }
      return { saved: true, drifts };
    });
  }

  load(): SchemaLearning | null {
    const row = this.learning.get();
    if (!row) return null;
    return {
      generation: row.generation,
      position: row.position_id === null ? null : { tx: row.position_tx, id: row.position_id },
      fromStart: row.from_start === 1,
      schemas: this.schemas.all().map(toObservedSchema),
    };
  }

  saveLearning(save: SchemaLearningSave): { saved: boolean; drifts: StoredDrift[] } {
    return this.save.immediate(save);
  }

  restartLearning(now: number): number {
    return this.db.transaction(() => {
      this.clearSchemas.run();
      return this.restart.get(now)!.generation;
    }).immediate();
  }

  list(filter: { source?: string; event?: string }): ObservedSchema[] {
    const rows = this.db
      .prepare<unknown[], ObservedSchemaRow>('SELECT * FROM observed_schemas WHERE (? IS NULL OR source = ?) AND (? IS NULL OR event = ?) ORDER BY source, event')
      .all(filter.source ?? null, filter.source ?? null, filter.event ?? null, filter.event ?? null);
    return rows.map(toObservedSchema);
  }

  drifts(filter: DriftFilter): StoredDrift[] {
    const rows = this.db
      .prepare<unknown[], DriftRow>('SELECT * FROM schema_drifts WHERE (? IS NULL OR source = ?) AND (? IS NULL OR event = ?) AND id < ? ORDER BY id DESC LIMIT ?')
      .all(filter.source ?? null, filter.source ?? null, filter.event ?? null, filter.event ?? null, filter.before ?? Number.MAX_SAFE_INTEGER, filter.limit);
    return rows.map(toStoredDrift);
  }
}
