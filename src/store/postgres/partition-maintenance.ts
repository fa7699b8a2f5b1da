import type pg from 'pg';
import type { PartitionPlan as StorePartitionPlan, PartitionReport } from '../retention-store.js';
import { dropPartition, ensurePartitionsAhead, estimateAll, freeDiscarded, holdsEvents, isLegacy, listPartitions, movePending, type TimePartition } from './partitions.js';

export interface PartitionPlan extends StorePartitionPlan {
  days: number;
}

/**
 * One retention pass over the partitions (run under the `retention` lease, so by one node at a time; the
 * lease is renewed between the steps that may wait, and a pass that lost it stops):
 * 1. creates the current partition and those ahead;
 * 2. drops the partitions wholly older than the age limit, their pending events moved first;
 * 3. the legacy partition (rows from before migration 013) is pruned by the batched deletes; its pending
 *    events older than the age limit move out, and once empty it is dropped;
 * 4. count-based retention: while the events beyond `maxEvents` are at least a whole oldest partition, that
 *    partition is dropped (never the current one, nor while the legacy one still holds the oldest rows).
 *    The remainder, less than a partition, is left to the batched deletes.
 * 5. the dropped ranges' tables are freed a file at a time (freeDiscarded); those an interrupted pass left
 *    are freed before anything else.
 * Counts are estimates (estimateEvents): no partition is counted row by row. Each is an upper bound, so their
 * sum, less what was dropped, bounds the events left (`eventsAtMost`): the pass counts the events exactly only
 * when that bound is over `maxEvents`, instead of reading the whole history every pass.
 */
export async function maintainPartitions(pool: pg.Pool, plan: PartitionPlan): Promise<PartitionReport> {
  // Leftovers first: a range discarded again under the same name must find the name free.
  await freeDiscarded(pool);
  const report = await createAndDrop(pool, plan);
  if (!report.interrupted) await freeDiscarded(pool);
  return report;
}

async function createAndDrop(pool: pg.Pool, plan: PartitionPlan): Promise<PartitionReport> {
  const report: PartitionReport = { byAge: 0, byCount: 0, moved: 0, created: 0, dropped: 0, interrupted: false, eventsAtMost: null };
  report.created = await ensurePartitionsAhead(pool, plan.now, plan.days);
  const renew = plan.renew ?? (async () => true);
  /** Drops `range`; null when the lease was lost (the pass stops). */
  const drop = async (range: TimePartition): Promise<number | null> => {
    const result = await dropPartition(pool, range, plan.now, renew);
    if (!result) {
      report.interrupted = true;
      return null;
    }
    report.moved += result.moved;
    if (result.removed) report.dropped += 1;
    return result.dropped;
  };
  let partitions = await listPartitions(pool);
  for (const range of partitions) {
    if (isLegacy(range) || range.to > plan.storedBefore) continue;
    const dropped = await drop(range);
    if (dropped === null) return report;
    report.byAge += dropped;
  }
  const legacy = partitions.find(isLegacy);
  if (legacy) {
    const cutoff = Math.trunc(plan.storedBefore);
    report.moved += await movePending(pool, legacy, plan.now, `e.received_at < ${cutoff} AND (e.imported_at IS NULL OR e.imported_at < ${cutoff})`);
    if (!(await holdsEvents(pool, legacy)) && (await drop(legacy)) === null) return report;
  }
  partitions = await listPartitions(pool);
  if (partitions.some(isLegacy)) return report;
  const sizes = await estimateAll(pool, partitions);
  let excess = sizes.reduce((a, b) => a + b, 0) - plan.maxEvents;
  for (const [i, range] of partitions.entries()) {
    if (excess <= 0 || range.to > plan.now || sizes[i]! > excess) break;
    const dropped = await drop(range);
    if (dropped === null) return report;
    report.byCount += dropped;
    excess -= dropped;
  }
  report.eventsAtMost = excess + plan.maxEvents;
  return report;
}
