import { HookrelayError } from '../../../errors.js';
import type { OperationsContext } from '../../../operations/context.js';
import type { JobRunner } from '../../../operations/jobs/job-runner.js';
import { NumericIdParamsSchema } from '../request-schemas.js';
import { JobListSchema, JobSchema } from '../../../operations/view-schemas.js';
import { defineRoute, type AdminRoute } from '../route-table.js';
import { jobView } from '../../../operations/views.js';

/** Jobs kept in the list answer: the newest ones. */
const JOB_LIST_LIMIT = 100;

export function jobRoutes(ctx: OperationsContext, jobs: JobRunner): AdminRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/jobs',
      operationId: 'listJobs',
      summary: `The newest ${JOB_LIST_LIMIT} bulk replay and retry jobs, newest first`,
      success: { status: 200, description: 'jobs', schema: JobListSchema },
      async handle() {
        return { status: 200, body: (await ctx.store.listJobs(JOB_LIST_LIMIT)).map(jobView) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/jobs/:id',
      operationId: 'getJob',
      summary: 'One job and its progress',
      params: NumericIdParamsSchema,
      success: { status: 200, description: 'the job', schema: JobSchema },
      errors: [{ status: 404, description: 'no such job (`not_found`)' }],
      async handle({ params }) {
        const job = await ctx.store.getJob(params.id);
        if (!job) throw new HookrelayError('not_found', `No job ${params.id}.`);
        return { status: 200, body: jobView(job) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/jobs/:id/cancel',
      operationId: 'cancelJob',
      summary: 'Cancel a running job',
      description: 'The job stops before its next batch; batches already written stay. The answer has state `cancelled`.',
      params: NumericIdParamsSchema,
      success: { status: 200, description: 'the job, cancelled', schema: JobSchema },
      errors: [{ status: 404, description: 'no such job (`not_found`)' }, { status: 409, description: 'the job has already finished (`conflict`)' }],
      async handle({ params }) {
        return { status: 200, body: jobView(await jobs.cancel(params.id)) };
      },
    }),
  ];
}
