import { z } from 'zod';
import { EventEnvelopeSchema, KNOWN_EVENT_SCHEMAS } from '../ingest/event-schemas.js';
import { expectedFields, type ExpectedField } from './json-schema-fields.js';

const cache = new Map<string, Map<string, ExpectedField>>();

/**
 * The fields the schema hookrelay validates an event name with expects (the full schema of a known name,
 * the envelope otherwise), derived once from the zod schema through its JSON Schema.
 */
export function specFieldsOf(event: string): Map<string, ExpectedField> {
  const key = Object.hasOwn(KNOWN_EVENT_SCHEMAS, event) ? event : '';
  let fields = cache.get(key);
  if (!fields) {
    const schema = key === '' ? EventEnvelopeSchema : KNOWN_EVENT_SCHEMAS[key]!;
    fields = expectedFields(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>);
    cache.set(key, fields);
  }
  return fields;
}

/** Whether an event name has a full schema (its drift from the spec is meaningful) or only the envelope. */
export function hasFullSchema(event: string): boolean {
  return Object.hasOwn(KNOWN_EVENT_SCHEMAS, event);
}
