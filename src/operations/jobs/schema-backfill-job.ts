import type { JobProgress } from '../../store/job-store.js';
import type { SchemaLearning, SchemaStore } from '../../store/schema-store.js';
import type { BatchLoop, BatchLoopResult } from './replay-job.js';

export interface SchemaBackfillInput {
  /** Events stored when the job started. */
  total: number;
  /** The newest event id when the job started: the learner has caught up once its position passes it. */
  throughId: number;
  pollMs: number;
  /** No move of the learner for this long fails the job: no node learns (`schema.enabled` false everywhere). */
  stallMs: number;
  now: () => number;
}

const learnedCount = (learning: SchemaLearning | null): number => (learning?.schemas ?? []).reduce((sum, schema) => sum + schema.eventsSeen, 0);

/** Whether the learner has worked through every event stored when the backfill started. */
function caughtUp(learning: SchemaLearning | null, input: SchemaBackfillInput): boolean {
  if (!learning || learning.fromStart || learning.position === null) return false;
  return learnedCount(learning) >= input.total || learning.position.id >= input.throughId;
}

/**
 * A backfill: the observed schemas were forgotten and the learner (the `schema` lease holder, any node)
 * starts again with the oldest stored event, in commit order, recording any drift history shows. The job
 * follows it: `processed` is the events learned so far. Cancelling stops the following, not the learning.
 */
export async function runSchemaBackfillJob(loop: Omit<BatchLoop, 'store'> & { store: SchemaStore }, input: SchemaBackfillInput): Promise<BatchLoopResult> {
  const progress: JobProgress = { total: input.total, processed: 0, created: 0, failed: 0 };
  let lastMove = input.now();
  let lastMark = '';
  for (;;) {
    if (await loop.shouldStop()) return { progress, stopped: true };
    const learning = await loop.store.loadSchemaLearning();
    if (caughtUp(learning, input)) {
      progress.processed = input.total;
      await loop.onProgress({ ...progress });
      return { progress, stopped: false };
    }
    progress.processed = Math.min(input.total, learnedCount(learning));
    await loop.onProgress({ ...progress });
    const mark = `${learning?.generation} ${learning?.position?.tx} ${learning?.position?.id} ${progress.processed}`;
    if (mark !== lastMark) {
      lastMark = mark;
      lastMove = input.now();
    } else if (input.now() - lastMove > input.stallMs) {
      throw new Error(`the schema learner has not moved for ${Math.round(input.stallMs / 1000)} s: is schema.enabled false on every node?`);
    }
    await new Promise((resolve) => setTimeout(resolve, input.pollMs));
  }
}
