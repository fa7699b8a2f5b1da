import type { JsonType, NewDrift, ObservedField, ObservedSchema } from '../store/schema-store.js';
import { exampleValue } from './example-value.js';
import { walkFields, type WalkLimits } from './field-paths.js';
import { JSON_TYPE_BIT, JSON_TYPES, jsonTypeOf, typesOfBits, type JsonTypeBits } from './json-types.js';

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

/** A field of an entry, and what the body being observed shows at its path. */
interface Tracked {
  field: ObservedField;
  /** The observation (`SchemaAggregate.observation`) that last met the path. */
  seenIn: number;
  /** The types that observation's body shows at the path. */
  bits: JsonTypeBits;
  /** The first scalar that body shows at the path; undefined if none. */
  example: Scalar | undefined;
  /** The path is new with that body. */
  added: boolean;
}

interface Entry {
  schema: ObservedSchema;
  fields: Map<string, Tracked>;
  /**
   * The latest scalar seen per path, not yet turned into its example: masking and truncating every field of
   * every body cost more than the rest of learning, and only the value a save finds last is ever shown.
   */
  examples: Map<string, Scalar>;
}

function drift(event: LearnedEvent, kind: NewDrift['kind'], path: string, before: readonly JsonType[], after: readonly JsonType[]): NewDrift {
  return { source: event.source, event: event.event, kind, path, before: [...before], after: [...after], eventId: event.id, detectedAt: event.receivedAt };
}

function tracked(field: ObservedField): Tracked {
  return { field, seenIn: 0, bits: 0, example: undefined, added: false };
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
  private readonly walkLimits: WalkLimits;
  /** Events of (source, event name) pairs beyond `maxEventTypes`, not learned. */
  refusedEvents = 0;

  // The body being observed. Its sightings are marked on the entry's own fields (`Tracked`), so a body
  // already seen in shape allocates nothing per field.
  private observation = 0;
  private current: Entry | null = null;
  private receivedAt = 0;
  /** Fields the body shows, in the order it first shows them. */
  private readonly met: Tracked[] = [];
  /** Distinct paths the body shows, and those past `maxFields` (not learned) among them. */
  private distinct = 0;
  private untracked: Set<string> | null = null;
  /** Sightings of new paths past `maxFields` distinct paths in the body (a body cut short). */
  private bodyTruncated = 0;

  constructor(
    private readonly settings: LearnSettings,
    initial: readonly ObservedSchema[] = [],
  ) {
    this.walkLimits = { maxDepth: settings.maxDepth, maxArrayElements: settings.maxArrayElements };
    for (const schema of initial) {
      this.entries.set(entryKey(schema.source, schema.event), { schema: { ...schema }, fields: new Map(schema.fields.map((field) => [field.path, tracked({ ...field, types: { ...field.types } })])), examples: new Map() });
      this.sources.add(schema.source);
    }
  }

  observe(event: LearnedEvent, body: unknown): NewDrift[] {
    const key = entryKey(event.source, event.event);
    const drifts: NewDrift[] = [];
    let entry = this.entries.get(key);
    if (!entry) {
      if (this.entries.size >= this.settings.maxEventTypes) {
        this.refusedEvents += 1;
        return drifts;
      }
      // The first event of a source starts its picture; a new name from a source already seen is news.
      if (this.sources.has(event.source)) drifts.push(drift(event, 'event_added', '', [], []));
      this.sources.add(event.source);
      entry = {
        schema: { source: event.source, event: event.event, eventsSeen: 0, firstSeen: event.receivedAt, lastSeen: event.receivedAt, truncated: 0, fields: [] },
        fields: new Map(),
        examples: new Map(),
      };
      this.entries.set(key, entry);
    }
    const { schema, fields, examples } = entry;
    const firstEvent = schema.eventsSeen === 0;
    this.observation += 1;
    this.current = entry;
    this.receivedAt = event.receivedAt;
    this.met.length = 0;
    this.distinct = 0;
    this.untracked?.clear();
    this.bodyTruncated = 0;
    walkFields(body, this.walkLimits, this.see);
    this.current = null;
    let added: NewDrift[] | null = null;
    for (const seen of this.met) {
      const { field } = seen;
      const types = typesOfBits(seen.bits);
      if (seen.added) {
        seen.added = false;
        if (!firstEvent) (added ??= []).push(drift(event, 'field_added', field.path, [], types));
      } else if (types.some((type) => (field.types[type] ?? 0) === 0)) {
        drifts.push(drift(event, 'type_changed', field.path, typesOf(field), types));
      }
      for (const type of types) field.types[type] = (field.types[type] ?? 0) + 1;
      field.present += 1;
      field.streak += 1;
      field.lastSeen = event.receivedAt;
      if (seen.example !== undefined) examples.set(field.path, seen.example);
      else if (!types.some((type) => type !== 'object' && type !== 'array')) {
        examples.delete(field.path);
        field.example = null;
      }
    }
    if (added) drifts.push(...outermost(added));
    // A body cut short by the path cap says nothing about what it lacks.
    let removed: NewDrift[] | null = null;
    for (const { field, seenIn } of fields.values()) {
      if (seenIn === this.observation) continue;
      if (this.bodyTruncated === 0 && this.settings.disappearAfter > 0 && field.streak >= this.settings.disappearAfter) (removed ??= []).push(drift(event, 'field_removed', field.path, typesOf(field), []));
      field.streak = 0;
    }
    if (removed) drifts.push(...outermost(removed));
    schema.truncated += this.bodyTruncated;
    schema.eventsSeen += 1;
    schema.lastSeen = Math.max(schema.lastSeen, event.receivedAt);
    schema.firstSeen = Math.min(schema.firstSeen, event.receivedAt);
    this.changed.add(key);
    return drifts;
  }

  /**
   * One value of the body being observed, at `path`: marks the path's field as met by this body, adding the
   * field when the path is new (up to `maxFields`; past it the path is counted as truncated, once per body).
   * Past `maxFields` distinct paths in one body the rest is cut (counted per sighting) and not walked.
   */
  private readonly see = (path: string, value: unknown): boolean => {
    const entry = this.current!;
    let seen = entry.fields.get(path);
    const type = jsonTypeOf(value);
    const scalar = type !== 'object' && type !== 'array';
    if (seen !== undefined && seen.seenIn === this.observation) {
      seen.bits |= JSON_TYPE_BIT[type];
      if (scalar && seen.example === undefined) seen.example = value as Scalar;
      return true;
    }
    if (seen === undefined && this.untracked?.has(path)) return true;
    if (this.distinct >= this.settings.maxFields) {
      this.bodyTruncated += 1;
      return false;
    }
    this.distinct += 1;
    if (seen === undefined) {
      if (entry.fields.size >= this.settings.maxFields) {
        (this.untracked ??= new Set()).add(path);
        entry.schema.truncated += 1;
        return true;
      }
      seen = tracked({ path, types: {}, present: 0, firstSeen: this.receivedAt, lastSeen: this.receivedAt, example: null, streak: 0 });
      seen.added = true;
      entry.fields.set(path, seen);
    }
    seen.seenIn = this.observation;
    seen.bits = JSON_TYPE_BIT[type];
    seen.example = scalar ? (value as Scalar) : undefined;
    this.met.push(seen);
    return true;
  };

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
      const seen = entry.fields.get(path);
      if (seen) seen.field.example = exampleValue(path, value, this.settings.maskExamples);
    }
    entry.examples.clear();
    const fields = [...entry.fields.values()].map((seen) => seen.field).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)).map((field) => ({ ...field, types: { ...field.types } }));
    return { ...entry.schema, fields };
  }
}
