import type { JsonType, NewDrift, ObservedField, ObservedSchema } from '../store/schema-store.js';
import { exampleValue } from './example-value.js';
import { extractFields } from './field-paths.js';
import { JSON_TYPES, typesOfBits } from './json-types.js';

/** The bounds and thresholds of learning (config `schema.*`). */
export interface LearnSettings {
  /** Field paths kept per (source, event name); later new paths are counted as truncated. */
  maxFields: number;
  /** Nesting walked below the body's root. */
  maxDepth: number;
  /** Elements of one array walked per body. */
  maxArrayElements: number;
  /** (source, event name) pairs kept; events of later new pairs are counted, not learned. */
  maxEventTypes: number;
  /** A field present in every one of this many latest events, then absent, has disappeared. */
  disappearAfter: number;
  /** Hide personal data in example values. */
  maskExamples: boolean;
}

export const DEFAULT_LEARN_SETTINGS: LearnSettings = {
  maxFields: 500,
  maxDepth: 16,
  maxArrayElements: 100,
  maxEventTypes: 200,
  disappearAfter: 20,
  maskExamples: true,
};

/** One stored event as the learner reads it. */
export interface LearnedEvent {
  id: number;
  source: string;
  event: string;
  receivedAt: number;
}

type Scalar = string | number | boolean | null;

interface Entry {
  schema: ObservedSchema;
  fields: Map<string, ObservedField>;
  /**
   * The latest scalar seen per path, not yet turned into its example: masking and truncating every field of
   * every body cost more than the rest of learning, and only the value a save finds last is ever shown.
   */
  examples: Map<string, Scalar>;
}

function entryKey(source: string, event: string): string {
  return `${source}\u0000${event}`;
}

function typesOf(field: ObservedField): JsonType[] {
  return JSON_TYPES.filter((type) => (field.types[type] ?? 0) > 0);
}

/** Drops the paths whose parent is in the list too: a new or vanished object is one drift, not one per field. */
function outermost<T extends { path: string }>(items: T[]): T[] {
  const paths = new Set(items.map((item) => item.path));
  return items.filter((item) => {
    for (let i = item.path.length - 1; i > 0; i -= 1) {
      const c = item.path[i];
      if ((c === '.' || c === '[') && paths.has(item.path.slice(0, i))) return false;
    }
    return true;
  });
}

/**
 * The observed schemas in memory, and the drift rules: fed one event body at a time (in commit order), it
 * updates the summary of that (source, event name) and returns the drifts the body showed. Pure apart from
 * its own state; the learner persists what `takeChanged` returns.
 */
export class SchemaAggregate {
  private readonly entries = new Map<string, Entry>();
  private readonly sources = new Set<string>();
  private readonly changed = new Set<string>();
  /** Events of (source, event name) pairs beyond `maxEventTypes`, not learned. */
  refusedEvents = 0;

  constructor(
    private readonly settings: LearnSettings,
    initial: readonly ObservedSchema[] = [],
  ) {
    for (const schema of initial) {
      this.entries.set(entryKey(schema.source, schema.event), { schema: { ...schema }, fields: new Map(schema.fields.map((field) => [field.path, { ...field, types: { ...field.types } }])), examples: new Map() });
      this.sources.add(schema.source);
    }
  }

  observe(event: LearnedEvent, body: unknown): NewDrift[] {
    const key = entryKey(event.source, event.event);
    const drifts: NewDrift[] = [];
    const drift = (kind: NewDrift['kind'], path: string, before: readonly JsonType[], after: readonly JsonType[]): NewDrift => ({
      source: event.source,
      event: event.event,
      kind,
      path,
      before: [...before],
      after: [...after],
      eventId: event.id,
      detectedAt: event.receivedAt,
    });
    let entry = this.entries.get(key);
    if (!entry) {
      if (this.entries.size >= this.settings.maxEventTypes) {
        this.refusedEvents += 1;
        return [];
      }
      // The first event of a source starts its picture; a new name from a source already seen is news.
      if (this.sources.has(event.source)) drifts.push(drift('event_added', '', [], []));
      this.sources.add(event.source);
      entry = {
        schema: { source: event.source, event: event.event, eventsSeen: 0, firstSeen: event.receivedAt, lastSeen: event.receivedAt, truncated: 0, fields: [] },
        fields: new Map(),
        examples: new Map(),
      };
      this.entries.set(key, entry);
    }
    const { schema, fields, examples } = entry;
    const { settings } = this;
    const seen = extractFields(body, { maxDepth: settings.maxDepth, maxPaths: settings.maxFields, maxArrayElements: settings.maxArrayElements });
    const firstEvent = schema.eventsSeen === 0;
    const added: NewDrift[] = [];
    for (const [path, sighting] of seen.fields) {
      let field = fields.get(path);
      const types = typesOfBits(sighting.types);
      if (!field) {
        if (fields.size >= settings.maxFields) {
          schema.truncated += 1;
          continue;
        }
        if (!firstEvent) added.push(drift('field_added', path, [], types));
        field = { path, types: {}, present: 0, firstSeen: event.receivedAt, lastSeen: event.receivedAt, example: null, streak: 0 };
        fields.set(path, field);
      } else if (types.some((type) => (field!.types[type] ?? 0) === 0)) {
        drifts.push(drift('type_changed', path, typesOf(field), types));
      }
      for (const type of types) field.types[type] = (field.types[type] ?? 0) + 1;
      field.present += 1;
      field.streak += 1;
      field.lastSeen = event.receivedAt;
      if (sighting.example !== undefined) examples.set(path, sighting.example);
      else if (!types.some((type) => type !== 'object' && type !== 'array')) {
        examples.delete(path);
        field.example = null;
      }
    }
    drifts.push(...outermost(added));
    // A body cut short by the path cap says nothing about what it lacks.
    const removed: NewDrift[] = [];
    for (const field of fields.values()) {
      if (seen.fields.has(field.path)) continue;
      if (seen.truncated === 0 && settings.disappearAfter > 0 && field.streak >= settings.disappearAfter) removed.push(drift('field_removed', field.path, typesOf(field), []));
      field.streak = 0;
    }
    drifts.push(...outermost(removed));
    schema.truncated += seen.truncated;
    schema.eventsSeen += 1;
    schema.lastSeen = Math.max(schema.lastSeen, event.receivedAt);
    schema.firstSeen = Math.min(schema.firstSeen, event.receivedAt);
    this.changed.add(key);
    return drifts;
  }

  /** The schemas changed since the last call, whole, fields in path order. */
  takeChanged(): ObservedSchema[] {
    const out = [...this.changed].map((key) => this.snapshot(this.entries.get(key)!));
    this.changed.clear();
    return out;
  }

  all(): ObservedSchema[] {
    return [...this.entries.values()].map((entry) => this.snapshot(entry));
  }

  private snapshot(entry: Entry): ObservedSchema {
    for (const [path, value] of entry.examples) {
      const field = entry.fields.get(path);
      if (field) field.example = exampleValue(path, value, this.settings.maskExamples);
    }
    entry.examples.clear();
    const fields = [...entry.fields.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)).map((field) => ({ ...field, types: { ...field.types } }));
    return { ...entry.schema, fields };
  }
}
