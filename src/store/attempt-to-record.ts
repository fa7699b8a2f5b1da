import type { AttemptResolution } from './delivery-queue.js';
import type { AttemptRecord } from './outbox-store.js';

/** One finished attempt as the worker hands it to the store: recorded with the lease it ran under. */
export interface AttemptToRecord {
  deliveryId: number;
  leaseToken: string;
  attempt: AttemptRecord;
  resolution: AttemptResolution;
}

/** What an attempt leaves on its delivery row, on both backends (the attempt row itself is `attempt` as is). */
export interface DeliveryAfterAttempt {
  state: AttemptResolution['state'];
  attempts: number;
  /** Node clock; null unless the delivery stays pending. */
  nextAttemptAt: number | null;
  lastStatus: number | null;
  /** `code: message`, or null when the attempt got an answer. */
  lastError: string | null;
  deadReason: string | null;
  /** The destination (URL origin) of a delivery that died of retryable failures there: what a redrive looks for. */
  retryableDeadDestination: string | null;
  /** When the key's blocked time starts, if this attempt starts it (kept when already blocked). */
  blockedSince: number | null;
  /** Added to the row's pass offset: 1 for a failure outside the retry schedule, else 0. */
  passOffsetStep: 0 | 1;
}

export function deliveryAfterAttempt({ attempt, resolution }: AttemptToRecord): DeliveryAfterAttempt {
  return {
    state: resolution.state,
    attempts: attempt.attempt,
    nextAttemptAt: resolution.state === 'pending' ? resolution.nextAttemptAt : null,
    lastStatus: attempt.status,
    lastError: attempt.errorCode ? `${attempt.errorCode}: ${attempt.errorMessage ?? ''}`.trim() : null,
    deadReason: resolution.state === 'dead' ? resolution.reason : null,
    retryableDeadDestination: resolution.state === 'dead' && resolution.retryable ? attempt.urlOrigin : null,
    blockedSince: blockedSinceOf(attempt),
    passOffsetStep: resolution.state === 'pending' && resolution.outsideSchedule ? 1 : 0,
  };
}

/**
 * When an attempt starts a key's blocked time: a failure that leaves the row pending. An attempt cut short by
 * a shutdown is not the destination's failure (null: the row's time stays as it was).
 */
function blockedSinceOf(attempt: AttemptRecord): number | null {
  return attempt.outcome === 'pending' && attempt.errorCode !== 'aborted' ? attempt.startedAt : null;
}
