import { HookrelayError } from '../errors.js';
import type { CopyTable } from './copyable-store.js';

const NOUNS: Record<CopyTable, string> = { settings: 'setting', ruleSets: 'rule set', events: 'event', seenKeys: 'seen key', deliveries: 'delivery', outages: 'outage', redrives: 'redrive', attempts: 'attempt', jobs: 'job' };

/** A copied row the target already holds differently: under its id, or (an event) under its transfer. */
export function copyConflict(table: CopyTable, id: number | string, reason?: string): HookrelayError {
  return new HookrelayError(
    'store_copy_conflict',
    `The target holds a different ${NOUNS[table]} ${id} than the source${reason ? ` (${reason})` : ''}: it is in use by another instance, or was copied from another source. Copy into an empty database.`,
    { table, id },
  );
}
