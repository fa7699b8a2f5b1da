import type { AttemptRecord } from './outbox-store.js';

/**
 * When an attempt starts a key's blocked time: a failure that leaves the row pending. An attempt cut short by
 * a shutdown is not the destination's failure (null: the row's time stays as it was).
 */
export function blockedSinceOf(attempt: AttemptRecord): number | null {
  return attempt.outcome === 'pending' && attempt.errorCode !== 'aborted' ? attempt.startedAt : null;
}
