import { copyConflict } from './copy-conflict.js';
import { COPY_TABLES, type CopyExtent, type CopyKey, type CopyRows, type CopyTable, type CopyableStore } from './copyable-store.js';

export interface CopyOptions {
  /** Rows per transaction on the target. */
  batchSize: number;
  /** Asked between batches: true stops the copy there (Ctrl-C); what was written stays, a new run carries on. */
  shouldStop: () => boolean;
  /** After each batch: rows of the source done so far (including those a previous run copied) and in all. */
  onProgress: (progress: CopyProgress) => void;
  /** A pause after each batch (tests interrupt a copy in the middle with it). */
  pauseMs?: number;
  now: () => number;
}

export interface CopyProgress {
  table: CopyTable;
  done: number;
  total: number;
}

export interface CopiedTable {
  /** Rows in the source when the copy started. */
  source: number;
  /** Rows this run wrote that the target did not have. */
  added: number;
  /** Rows this run wrote (new ones, and rows already there brought up to date). */
  written: number;
}

export interface CopyResult {
  complete: boolean;
  tables: Record<CopyTable, CopiedTable>;
  /** The source gained or lost rows while it was copied: a server was running on it. */
  sourceChanged: boolean;
  /** The highest event and delivery ids in the target: new ones are handed out above them. */
  highestIds: { events: number | null; deliveries: number | null };
}

/** Tables whose rows a resumed copy skips up to the target's highest id; the others are few, and copied whole each run. */
const RESUMED_BY_ID: ReadonlySet<CopyTable> = new Set(['events', 'deliveries', 'attempts']);

const RUNNING_JOB_ERROR = 'interrupted: the store was copied while the job ran';

/**
 * Copies every row of `source` into `target` with its id, table by table in id order (settings, rule sets, events, seen keys,
 * deliveries, outages, redrives, attempts, jobs: a row's references are copied before it), one transaction per batch. Run
 * again after an interruption (Ctrl-C, kill -9, a lost connection) it carries on after the highest id the
 * target has, once that row and the lowest one are found identical in the source: a target holding other
 * data fails with store_copy_conflict before anything is written. Deliveries arrive lease-free: one a
 * worker held when the source stopped is due at once (at-least-once, under its own delivery id).
 */
export async function copyStore(source: CopyableStore, target: CopyableStore, options: CopyOptions): Promise<CopyResult> {
  const before = await source.copyExtent();
  const already = await target.copyExtent();
  const total = COPY_TABLES.reduce((sum, table) => sum + before[table].rows, 0);
  let done = COPY_TABLES.filter((table) => RESUMED_BY_ID.has(table)).reduce((sum, table) => sum + Math.min(already[table].rows, before[table].rows), 0);
  const tables = Object.fromEntries(COPY_TABLES.map((table) => [table, { source: before[table].rows, added: 0, written: 0 }])) as Record<CopyTable, CopiedTable>;
  const write = async <T extends CopyTable>(table: T, rows: CopyRows[T][]): Promise<void> => {
    tables[table].added += await target.writeCopyRows(table, rows.map((row) => prepare(table, row, options.now())));
    tables[table].written += rows.length;
  };

  for (const table of RESUMED_BY_ID) await checkResumable(source, table, already, write);
  let complete = true;
  walk: for (const table of COPY_TABLES) {
    let after: CopyKey<typeof table> | null = RESUMED_BY_ID.has(table) ? already[table].maxId : null;
    for (;;) {
      if (options.shouldStop()) {
        complete = false;
        break walk;
      }
      const rows = await source.readCopyRows(table, after, options.batchSize);
      if (rows.length === 0) break;
      await write(table, rows);
      after = copyKeyOf(rows.at(-1)!);
      done += rows.length;
      options.onProgress({ table, done: Math.min(done, total), total });
      if (options.pauseMs) await new Promise((resolve) => setTimeout(resolve, options.pauseMs));
    }
  }
  const afterCopy = await source.copyExtent();
  const sourceChanged = [...RESUMED_BY_ID].some((table) => afterCopy[table].rows !== before[table].rows || afterCopy[table].maxId !== before[table].maxId);
  const reached = await target.copyExtent();
  return { complete, tables, sourceChanged, highestIds: { events: reached.events.maxId, deliveries: reached.deliveries.maxId } };
}

/**
 * Before a resumed walk skips what the target has: its highest row must be the source's (written again, so its
 * identity is compared and its changing columns brought up to date), and so must its lowest while the source
 * still has it (retention may have pruned it since).
 */
async function checkResumable(
  source: CopyableStore,
  table: CopyTable,
  target: CopyExtent,
  write: <T extends CopyTable>(table: T, rows: CopyRows[T][]) => Promise<void>,
): Promise<void> {
  const { minId, maxId } = target[table];
  if (minId === null || maxId === null) return;
  const highest = await source.readCopyRows(table, maxId - 1, 1);
  if ((highest[0] as { id: number } | undefined)?.id !== maxId) throw copyConflict(table, maxId, 'the source has no such row');
  await write(table, highest);
  const lowest = await source.readCopyRows(table, minId - 1, 1);
  if ((lowest[0] as { id: number } | undefined)?.id === minId) await write(table, lowest);
}

/** Where a page of a copy ends: a setting's name, a rule set's hash, a seen key, any other row's id. */
export function copyKeyOf(row: CopyRows[CopyTable]): number | string {
  if ('hash' in row) return row.hash;
  if ('seenAt' in row) return row.key;
  return 'name' in row ? row.name : row.id;
}

/** What a row becomes in the target: deliveries lease-free (a held one due now), a job that was running failed. */
function prepare<T extends CopyTable>(table: T, row: CopyRows[T], now: number): CopyRows[T] {
  if (table === 'deliveries') {
    const delivery = row as CopyRows['deliveries'];
    if (delivery.leaseToken === null) return row;
    return { ...delivery, leaseToken: null, nextAttemptAt: delivery.state === 'pending' ? now : delivery.nextAttemptAt } as CopyRows[T];
  }
  if (table === 'jobs') {
    const job = row as CopyRows['jobs'];
    if (job.state !== 'running') return row;
    return { ...job, state: 'failed', error: RUNNING_JOB_ERROR, finishedAt: job.finishedAt ?? now } as CopyRows[T];
  }
  return row;
}
