import type { Logger } from 'pino';
import { HookrelayError } from '../errors.js';

/** The first pause between tries; it doubles up to the maximum. */
const FIRST_PAUSE_MS = 250;
const MAX_PAUSE_MS = 5_000;

/**
 * Runs a start-up step that needs the store (opening it, migrating), trying again with growing pauses while
 * it fails with `store_unavailable` (the database is starting, restarting, or out of reach), each failure
 * logged with its reason. After `timeoutMs` it gives up with an error that says what could not be done and
 * why; any other error ends it at once.
 */
export async function retryWhileStoreUnavailable<T>(what: string, step: () => Promise<T>, options: { timeoutMs: number; logger: Logger }): Promise<T> {
  const started = performance.now();
  let pauseMs = FIRST_PAUSE_MS;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await step();
    } catch (err) {
      if (!(err instanceof HookrelayError) || err.code !== 'store_unavailable') throw err;
      const reason = reasonOf(err);
      const left = options.timeoutMs - (performance.now() - started);
      if (left <= 0) {
        throw new HookrelayError(
          'store_unavailable',
          `Could not ${what} within ${options.timeoutMs} ms (database.startupTimeoutMs), after ${attempt} tries: ${reason}`,
          { attempts: attempt, timeoutMs: options.timeoutMs },
          { cause: err },
        );
      }
      const waitMs = Math.min(pauseMs, left);
      options.logger.warn({ attempt, reason, retryInMs: Math.round(waitMs) }, `could not ${what}; trying again`);
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      pauseMs = Math.min(MAX_PAUSE_MS, pauseMs * 2);
    }
  }
}

/** The store's message and the cause beneath it (a connection refused, a timeout, a password refused). */
function reasonOf(err: HookrelayError): string {
  const cause = (err as { cause?: unknown }).cause;
  const causeMessage = cause instanceof Error ? cause.message : undefined;
  return causeMessage && causeMessage !== err.message ? `${err.message} (${causeMessage})` : err.message;
}
