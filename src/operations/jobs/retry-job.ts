import type { BulkDeliveryFilter } from '../../store/bulk-store.js';
import type { JobProgress } from '../../store/job-store.js';
import type { RetrySummary } from '../retry-skips.js';
import { JOB_BATCH_SIZE, yieldToEventLoop } from './batches.js';
import type { BatchLoop, BatchLoopResult } from './replay-job.js';

/**
 * Makes matching dead-lettered deliveries pending again, oldest first, one transaction per batch. A
 * delivery that dies again while the job runs is not picked up a second time (the job has passed its id).
 * `filter.afterId` resumes an interrupted run. `summary` (what it skips, and why) is reported with its
 * progress.
 */
export async function runRetryJob(loop: BatchLoop, filter: BulkDeliveryFilter, total: number, summary: RetrySummary): Promise<BatchLoopResult> {
  const progress: JobProgress = { total, processed: 0, created: 0, failed: 0, summary: { ...summary } };
  let lastId = filter.afterId;
  for (;;) {
    if (await loop.shouldStop()) return { progress, stopped: true, lastId };
    const ids = await loop.store.retryDeadDeliveries({ ...filter, afterId: lastId ?? 0 }, JOB_BATCH_SIZE);
    progress.processed += ids.length;
    progress.created += ids.length;
    // Deliveries dead-lettered after the job started may be included: the total grows with them.
    progress.total = Math.max(progress.total, progress.processed);
    if (ids.length > 0) lastId = ids.at(-1)!;
    await loop.onProgress({ ...progress });
    if (ids.length < JOB_BATCH_SIZE) break;
    await yieldToEventLoop();
  }
  return { progress, stopped: false, lastId };
}
