import { compareFields } from '../schema/contract.js';
import { describeDrift } from '../schema/drift-text.js';
import { rulesTouchedBy } from '../schema/rules-touched.js';
import { hasFullSchema, specFieldsOf } from '../schema/spec-fields.js';
import type { RuleDescription } from '../rules/types.js';
import type { DriftFilter, ObservedSchema, StoredDrift } from '../store/schema-store.js';
import type { DriftView, ObservedSchemaView } from './schema-view-schemas.js';

const iso = (ms: number): string => new Date(ms).toISOString();

/** An observed schema with each field's share and its comparison with the spec-derived schema. */
export function observedSchemaView(schema: ObservedSchema): ObservedSchemaView {
  const spec = specFieldsOf(schema.event);
  const differences = new Map(compareFields(spec, schema).map((d) => [d.path, d]));
  return {
    source: schema.source,
    event: schema.event,
    eventsSeen: schema.eventsSeen,
    firstSeen: iso(schema.firstSeen),
    lastSeen: iso(schema.lastSeen),
    truncated: schema.truncated,
    spec: hasFullSchema(schema.event) ? 'full' : 'envelope',
    fields: schema.fields.map((field) => {
      const difference = differences.get(field.path)?.kind;
      return {
        path: field.path,
        types: field.types,
        present: field.present,
        share: schema.eventsSeen > 0 ? Math.round((field.present / schema.eventsSeen) * 10_000) / 10_000 : 0,
        firstSeen: iso(field.firstSeen),
        lastSeen: iso(field.lastSeen),
        example: field.example,
        spec: difference === 'not_in_contract' ? 'not_in_spec' : difference === 'type_differs' || difference === 'not_always_present' ? difference : 'as_spec',
      };
    }),
    specNotObserved: [...differences.values()].filter((d) => d.kind === 'not_observed').map((d) => ({ path: d.path, types: d.expected, required: spec.get(d.path)?.required ?? false })),
  };
}

export function driftView(drift: StoredDrift, rules: readonly RuleDescription[]): DriftView {
  return {
    ...drift,
    eventLink: `/console#/events/${drift.eventId}`,
    detectedAt: iso(drift.detectedAt),
    description: describeDrift(drift),
    rules: rulesTouchedBy(drift, rules),
  };
}

/** What `GET /schema` and `hookrelay schema show` read. */
export interface SchemaReader {
  listObservedSchemas(filter: { source?: string; event?: string }): Promise<ObservedSchema[]>;
  listDrifts(filter: DriftFilter): Promise<StoredDrift[]>;
}

export async function listObservedSchemaViews(store: SchemaReader, filter: { source?: string; event?: string }): Promise<ObservedSchemaView[]> {
  return (await store.listObservedSchemas(filter)).map(observedSchemaView);
}

export async function listDriftViews(store: SchemaReader, filter: DriftFilter, rules: readonly RuleDescription[]): Promise<{ drifts: DriftView[]; nextCursor: number | null }> {
  const drifts = await store.listDrifts(filter);
  return { drifts: drifts.map((d) => driftView(d, rules)), nextCursor: drifts.length === filter.limit ? drifts.at(-1)!.id : null };
}
