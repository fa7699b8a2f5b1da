import type { DriftKind, JsonType, ObservedField, ObservedSchema, StoredDrift } from './schema-store.js';

export interface ObservedSchemaRow {
  source: string;
  event: string;
  events_seen: number | string;
  first_seen: number | string;
  last_seen: number | string;
  truncated: number | string;
  /** JSON text (SQLite) or parsed jsonb (PostgreSQL). */
  fields: string | ObservedField[];
}

export interface DriftRow {
  id: number | string;
  source: string;
  event: string;
  kind: string;
  path: string;
  before: string | JsonType[];
  after: string | JsonType[];
  event_id: number | string;
  detected_at: number | string;
}

function json<T>(value: string | T): T {
  return typeof value === 'string' ? (JSON.parse(value) as T) : value;
}

export function toObservedSchema(row: ObservedSchemaRow): ObservedSchema {
  return {
    source: row.source,
    event: row.event,
    eventsSeen: Number(row.events_seen),
    firstSeen: Number(row.first_seen),
    lastSeen: Number(row.last_seen),
    truncated: Number(row.truncated),
    fields: json<ObservedField[]>(row.fields),
  };
}

export function toStoredDrift(row: DriftRow): StoredDrift {
  return {
    id: Number(row.id),
    source: row.source,
    event: row.event,
    kind: row.kind as DriftKind,
    path: row.path,
    before: json<JsonType[]>(row.before),
    after: json<JsonType[]>(row.after),
    eventId: Number(row.event_id),
    detectedAt: Number(row.detected_at),
  };
}
