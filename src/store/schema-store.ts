import type { NewEvents, StreamPosition } from './new-event-store.js';

/** The JSON types a field path is summarised by (whole and fractional numbers are both `number`). */
export type JsonType = 'string' | 'number' | 'boolean' | 'null' | 'object' | 'array';

/** One field path of an observed schema. */
export interface ObservedField {
  /** Dotted, `[]` for the elements of an array: `result.claimedTokens.tokens[].tokenId`. */
  path: string;
  /** Events that showed each type at the path. */
  types: Partial<Record<JsonType, number>>;
  /** Events that had the path. */
  present: number;
  firstSeen: number;
  lastSeen: number;
  /** The latest example (JSON text, truncated, masked unless `schema.maskExamples` is off); null for objects and arrays. */
  example: string | null;
  /** Consecutive latest events of the type that had the path: what "disappeared" is judged by. */
  streak: number;
}

/** What the events of one (source, event name) looked like. */
export interface ObservedSchema {
  source: string;
  event: string;
  eventsSeen: number;
  firstSeen: number;
  lastSeen: number;
  /** Path sightings not kept because the type already had `schema.maxFields` paths (or a body `maxFields`). */
  truncated: number;
  fields: ObservedField[];
}

export type DriftKind = 'field_added' | 'field_removed' | 'type_changed' | 'event_added';

export interface NewDrift {
  source: string;
  event: string;
  kind: DriftKind;
  /** '' for `event_added`. */
  path: string;
  /** The types known before and those the event showed. */
  before: JsonType[];
  after: JsonType[];
  /** The first event that showed it. */
  eventId: number;
  detectedAt: number;
}

export interface StoredDrift extends NewDrift {
  id: number;
}

/** What a drift is recorded once by: kind, path and (for a type change) the new types. */
export function driftKey(drift: Pick<NewDrift, 'kind' | 'path' | 'after'>): string {
  return drift.kind === 'type_changed' ? `${drift.kind} ${drift.path} ${drift.after.join('|')}` : `${drift.kind} ${drift.path}`;
}

/** Where the schema learner stands; `generation` changes when a backfill starts over. */
export interface SchemaLearning {
  generation: number;
  /** Null: not started yet; `fromStart` says whether it begins with the oldest stored event or with the next new one. */
  position: StreamPosition | null;
  fromStart: boolean;
  schemas: ObservedSchema[];
}

export interface SchemaLearningSave {
  /** The generation the learner loaded: the save is refused when a backfill has started over since. */
  generation: number;
  position: StreamPosition;
  /** Schemas changed since the last save (whole rows). */
  schemas: ObservedSchema[];
  drifts: NewDrift[];
  now: number;
}

export interface DriftFilter {
  source?: string;
  event?: string;
  /** Only drifts with an id below this (paging, newest first). */
  before?: number;
  limit: number;
}

/** A newly stored event as learning reads it: only what it learns from, a fraction of a stream's row. */
export interface EventToLearn {
  id: number;
  source: string;
  event: string;
  receivedAt: number;
  /** An edited copy: an operator's body, not the sender's, so not learned. */
  edited: boolean;
  body: Buffer;
}

/**
 * The observed schema of each (source, event name) and its drifts, shared by every node: one node (the
 * `schema` lease holder) learns and writes, any node reads.
 */
export interface SchemaStore {
  /** Events committed after `after`, in commit order, exactly as `readNewEvents` reads them (every event, no filter). */
  readEventsToLearn(after: StreamPosition, limit: number): Promise<NewEvents<EventToLearn>>;
  /** The learner's stored state: position, generation and every observed schema; null before the first save. */
  loadSchemaLearning(): Promise<SchemaLearning | null>;
  /**
   * In one transaction: the schemas, the new drifts (one already recorded under its key is left as it is)
   * and the position, if the generation is still `save.generation`. Returns whether it saved and the drifts
   * this call recorded (those to announce).
   */
  saveSchemaLearning(save: SchemaLearningSave): Promise<{ saved: boolean; drifts: StoredDrift[] }>;
  /** Forgets every observed schema and starts the learner over from the oldest stored event (a backfill); returns the new generation. Drifts are kept. */
  restartSchemaLearning(): Promise<number>;
  listObservedSchemas(filter: { source?: string; event?: string }): Promise<ObservedSchema[]>;
  /** Newest first. */
  listDrifts(filter: DriftFilter): Promise<StoredDrift[]>;
}
