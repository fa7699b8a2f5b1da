import type { BulkDeliveryFilter, JobProgress } from '../../../store/store.js';
import { JOB_BATCH_SIZE, yieldToEventLoop } from './batches.js';
import type { BatchLoop } from './replay-job.js';

/**
 * Makes matching dead-lettered deliveries pending again, oldest first, one transaction per batch. A
 * delivery that dies again while the job runs is not picked up a second time (the job has passed its id).
 */
export async function runRetryJob(loop: BatchLoop, filter: BulkDeliveryFilter, total: number, now: () => number): Promise<JobProgress> {
  const progress: JobProgress = { total, processed: 0, created: 0, failed: 0 };
  let afterId = 0;
  while (!loop.shouldStop()) {
    const ids = await loop.store.retryDeadDeliveries({ ...filter, afterId }, JOB_BATCH_SIZE, now());
    progress.processed += ids.length;
    progress.created += ids.length;
    // Deliveries dead-lettered after the job started may be included: the total grows with them.
    progress.total = Math.max(progress.total, progress.processed);
    await loop.onProgress({ ...progress });
    if (ids.length > 0) loop.wakeWorker();
    if (ids.length < JOB_BATCH_SIZE) break;
    afterId = ids.at(-1)!;
    await yieldToEventLoop();
  }
  return progress;
}
