import { z } from 'zod';

const isoTime = z.string().meta({ format: 'date-time' });
const jsonType = z.enum(['string', 'number', 'boolean', 'null', 'object', 'array']);

export const ObservedFieldSchema = z
  .object({
    path: z.string().meta({ description: 'dotted path; `[]` stands for the elements of an array, `*` for any key of a map (an object keyed by hashes, numbers or ids)' }),
    types: z.partialRecord(jsonType, z.number().int()).meta({ description: 'events that showed each JSON type at the path' }),
    present: z.number().int().meta({ description: 'events that had the path' }),
    share: z.number().meta({ description: '`present` / `eventsSeen` of its (source, event), 0 to 1' }),
    firstSeen: isoTime,
    lastSeen: isoTime,
    example: z.string().nullable().meta({ description: 'the latest example as JSON text, truncated to 80 characters, personal data masked unless `schema.maskExamples` is false; null for objects and arrays' }),
    spec: z.enum(['as_spec', 'not_in_spec', 'type_differs', 'not_always_present']).meta({ description: 'how it compares with the schema hookrelay validates the event name with (the envelope for an unrecognised name)' }),
  })
  .meta({ id: 'ObservedField' });

export const ObservedSchemaSchema = z
  .object({
    source: z.string(),
    event: z.string(),
    eventsSeen: z.number().int(),
    firstSeen: isoTime,
    lastSeen: isoTime,
    truncated: z.number().int().meta({ description: 'path sightings not kept because the type had `schema.maxFields` paths already' }),
    spec: z.enum(['full', 'envelope']).meta({ description: '`full`: compared with the event\'s full schema; `envelope`: an unrecognised name, compared with the envelope only' }),
    fields: z.array(ObservedFieldSchema),
    specNotObserved: z.array(z.object({ path: z.string(), types: z.array(jsonType), required: z.boolean() })).meta({ description: 'fields the spec-derived schema describes that no learned event had' }),
  })
  .meta({ id: 'ObservedSchema' });

export const ObservedSchemaListSchema = z.object({ schemas: z.array(ObservedSchemaSchema) }).meta({ id: 'ObservedSchemaList' });

export const DriftSchema = z
  .object({
    id: z.number().int(),
    source: z.string(),
    event: z.string(),
    kind: z.enum(['field_added', 'field_removed', 'type_changed', 'event_added']),
    path: z.string().meta({ description: "'' for `event_added`" }),
    before: z.array(jsonType),
    after: z.array(jsonType),
    eventId: z.number().int().meta({ description: 'the first event that showed it (for `field_removed`: the first without the field)' }),
    eventLink: z.string().meta({ description: 'the console page of that event, relative to the admin listener' }),
    detectedAt: isoTime,
    description: z.string(),
    rules: z
      .object({ where: z.array(z.string()), transform: z.array(z.string()) })
      .meta({ description: "today's rules whose `where` reads the field, and (best effort: the transform's text names the field's last key) whose transform may" }),
  })
  .meta({ id: 'Drift' });

export const DriftListSchema = z.object({ drifts: z.array(DriftSchema), nextCursor: z.number().int().nullable() }).meta({ id: 'DriftList' });

export type ObservedSchemaView = z.infer<typeof ObservedSchemaSchema>;
export type DriftView = z.infer<typeof DriftSchema>;
