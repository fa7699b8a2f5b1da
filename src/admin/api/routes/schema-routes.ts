import { z } from 'zod';
import type { OperationsContext } from '../../../operations/context.js';
import type { JobRunner } from '../../../operations/jobs/job-runner.js';
import { DriftListSchema, ObservedSchemaListSchema } from '../../../operations/schema-view-schemas.js';
import { listDriftViews, listObservedSchemaViews } from '../../../operations/schema-views.js';
import { JobSchema } from '../../../operations/view-schemas.js';
import { jobView } from '../../../operations/views.js';
import { defineRoute, type AdminRoute } from '../route-table.js';

const name = z.string().min(1).max(200);
const SchemaQuerySchema = z.object({ source: name.optional(), event: name.optional() }).strict();
const DriftsQuerySchema = z
  .object({
    source: name.optional(),
    event: name.optional(),
    limit: z.coerce.number().int().min(1).max(500).default(100),
    cursor: z.coerce.number().int().positive().optional().meta({ description: '`nextCursor` of the previous page' }),
  })
  .strict();

export function schemaRoutes(ctx: OperationsContext, jobs: JobRunner): AdminRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/schema',
      operationId: 'getObservedSchema',
      summary: 'The observed schema of each (source, event name): every field path with its types, presence, first and last seen, an example, and how it compares with the spec-derived schema',
      description:
        'Learned off the acknowledging path by the node holding the `schema` lease (every `schema.intervalMs`), so the newest events show up a few seconds late. Bounded: `schema.maxFields` paths per event name, arrays summarised by element type, maps (keyed by hashes, numbers or ids) by `*`.',
      query: SchemaQuerySchema,
      success: { status: 200, description: 'the observed schemas, by source and event name', schema: ObservedSchemaListSchema },
      async handle({ query }) {
        return { status: 200, body: { schemas: await listObservedSchemaViews(ctx.store, query) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/schema/drifts',
      operationId: 'listDrifts',
      summary: 'Drifts of the body shape (a field added, removed or retyped; a new event name), each once, newest first',
      description: "Each names the first event that showed it and today's rules that read the field (`where`; transforms best effort).",
      query: DriftsQuerySchema,
      success: { status: 200, description: 'a page of drifts', schema: DriftListSchema },
      async handle({ query }) {
        const rules = ctx.rules.current().rules.map((rule) => rule.describe());
        return { status: 200, body: await listDriftViews(ctx.store, { source: query.source, event: query.event, limit: query.limit, before: query.cursor }, rules) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/schema/backfill',
      operationId: 'startSchemaBackfill',
      summary: 'Build the observed schema again from every stored event (a job)',
      description:
        'Forgets the observed schemas and has the learner start again with the oldest stored event; drifts already recorded are kept, drifts the history shows are recorded (and alerted) once. The job follows the learner: `processed` is the events learned. Cancel stops the following, not the learning.',
      success: { status: 202, description: 'the job, running', schema: JobSchema },
      errors: [{ status: 409, description: 'too many jobs running (`conflict`)' }],
      async handle() {
        return { status: 202, body: jobView(await jobs.startSchemaBackfill()) };
      },
    }),
  ];
}
