import type { JsonType, ObservedField, ObservedSchema } from '../store/schema-store.js';
import { expectedFields, type ExpectedField } from './json-schema-fields.js';
import { JSON_TYPES } from './json-types.js';
import { lastStep } from './schema-paths.js';

/** How a pinned contract or the spec-derived schema and the observed schema differ at one path. */
export type FieldDifferenceKind = 'not_in_contract' | 'not_observed' | 'not_always_present' | 'type_differs';

export interface FieldDifference {
  path: string;
  kind: FieldDifferenceKind;
  expected: JsonType[];
  observed: JsonType[];
}

export type ContractMode = 'warn' | 'quarantine';

/** A pinned contract file: JSON Schema draft 2020-12 of the whole body, named by its source and event. */
export interface ContractDocument {
  $schema: string;
  'x-hookrelay-source': string;
  'x-hookrelay-event': string;
  'x-hookrelay-mode': ContractMode;
  [key: string]: unknown;
}

export const JSON_SCHEMA_DRAFT = 'https://json-schema.org/draft/2020-12/schema';

function observedTypes(field: ObservedField): JsonType[] {
  return JSON_TYPES.filter((type) => (field.types[type] ?? 0) > 0);
}

/** Events in which the field's parent was present (the whole count for a top-level field). */
function parentPresence(schema: ObservedSchema, byPath: Map<string, ObservedField>, path: string): number {
  const { parent } = lastStep(path);
  return parent === '' ? schema.eventsSeen : (byPath.get(parent)?.present ?? 0);
}

/**
 * The observed schema as a pinned contract: every field with the types seen, `required` where a field was
 * present whenever its parent was, objects left open (`additionalProperties` unset) so a new field is
 * reported as drift rather than breaking the contract.
 */
export function exportContract(schema: ObservedSchema, mode: ContractMode = 'warn'): ContractDocument {
  const byPath = new Map(schema.fields.map((field) => [field.path, field]));
  const root: Record<string, unknown> = { type: 'object' };
  const nodes = new Map<string, Record<string, unknown>>([['', root]]);
  for (const field of schema.fields) {
    const types = observedTypes(field);
    const node: Record<string, unknown> = { type: types.length === 1 ? types[0] : types };
    nodes.set(field.path, node);
    const { parent, step } = lastStep(field.path);
    const parentNode = nodes.get(parent);
    if (!parentNode) continue;
    if ('items' in step) {
      parentNode.items = node;
      continue;
    }
    if ('anyKey' in step) {
      parentNode.additionalProperties = node;
      continue;
    }
    const properties = (parentNode.properties ??= {}) as Record<string, unknown>;
    properties[step.key] = node;
    if (!field.path.endsWith('[]') && field.present >= parentPresence(schema, byPath, field.path)) {
      ((parentNode.required ??= []) as string[]).push(step.key);
    }
  }
  return {
    $schema: JSON_SCHEMA_DRAFT,
    'x-hookrelay-source': schema.source,
    'x-hookrelay-event': schema.event,
    'x-hookrelay-mode': mode,
    title: `${schema.source} ${schema.event}`,
    description: `Exported by hookrelay from ${schema.eventsSeen} observed events (${new Date(schema.firstSeen).toISOString()} to ${new Date(schema.lastSeen).toISOString()}).`,
    ...root,
  };
}

/**
 * What differs between the fields a schema expects and those observed: a field it lacks, a field never
 * observed, a required field observed missing from some events, a type it does not allow.
 */
export function compareFields(expected: Map<string, ExpectedField>, schema: ObservedSchema): FieldDifference[] {
  const byPath = new Map(schema.fields.map((field) => [field.path, field]));
  const out: FieldDifference[] = [];
  for (const field of schema.fields) {
    const want = expected.get(field.path);
    const seen = observedTypes(field);
    if (!want) out.push({ path: field.path, kind: 'not_in_contract', expected: [], observed: seen });
    else {
      const allowed = [...want.types];
      if (seen.some((type) => !want.types.has(type))) out.push({ path: field.path, kind: 'type_differs', expected: allowed, observed: seen });
      else if (want.required && field.present < parentPresence(schema, byPath, field.path)) out.push({ path: field.path, kind: 'not_always_present', expected: allowed, observed: seen });
    }
  }
  for (const [path, want] of expected) {
    if (!byPath.has(path)) out.push({ path, kind: 'not_observed', expected: [...want.types], observed: [] });
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Compares a pinned contract document with the observed schema. */
export function diffContract(contract: Record<string, unknown>, schema: ObservedSchema): FieldDifference[] {
  return compareFields(expectedFields(contract), schema);
}
