import { HookrelayError } from '../../errors.js';

/**
 * SQLSTATE classes that say the database as a whole cannot serve right now, whatever the data: connection
 * lost (08), insufficient resources such as a full disk (53), operator intervention such as a shutdown or
 * pg_terminate_backend (57, which also holds statement timeouts), system errors (58), a read-only
 * server after a failover (25006), a lock not obtained within lock_timeout (55P03).
 */
const STORE_WIDE_STATES = /^(08|53|57|58|25006|55P03)/;

/**
 * Deadlock or serialization failure: nothing was written, the same work can simply run again. So is a key
 * the ledger of seen keys got from another transaction meanwhile (two nodes storing copies of one transfer
 * at once): run again, the statement finds the key and answers a repeat.
 */
export function isRetryable(err: unknown): boolean {
  const { code, constraint } = err as { code?: unknown; constraint?: unknown };
  return code === '40P01' || code === '40001' || (code === '23505' && constraint === 'seen_keys_pkey');
}

/** True when the failure is the database's (or the network's), not one statement's data. */
export function isStoreWideError(err: unknown): boolean {
  if (err instanceof HookrelayError) return err.code === 'store_unavailable';
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') return STORE_WIDE_STATES.test(code) || /^E[A-Z]+$/.test(code); // ECONNREFUSED, ECONNRESET, ...
  // node-postgres reports a connection that ended or timed out, or a query given up on at its client-side
  // deadline (query_timeout), with a plain Error.
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed|Query read timeout/i.test(
    String((err as Error).message ?? ''),
  );
}

/**
 * Text PostgreSQL cannot hold: a NUL character (valid in JSON as \u0000, and kept by SQLite). It is the
 * event's fault, not the database's: sending it again would fail again, so it is refused as a bad payload.
 */
const UNSTORABLE_TEXT = new Set(['22021', '22P05']);

/** Any failure of a write: the store could not commit it (503, retry later), with the SQLSTATE for the log. */
export function asStoreError(err: unknown): HookrelayError {
  if (err instanceof HookrelayError) return err;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && UNSTORABLE_TEXT.has(code)) {
    return new HookrelayError('invalid_payload', 'The event cannot be stored: a field holds a NUL character (\\u0000).', {
      issues: [{ path: [], message: 'a NUL character (\\u0000) in a stored field (result.id, event, email, ...)' }],
    }, { cause: err });
  }
  return new HookrelayError('store_unavailable', 'The event store could not commit. Retry later: an event that was stored after all is answered as a duplicate.', { postgres: stateOf(err) }, { cause: err });
}

/** A read that failed because the database is gone is a 503 too; any other failure stays what it is. */
export function asReadError(err: unknown): unknown {
  return isStoreWideError(err) ? new HookrelayError('store_unavailable', 'The event store cannot be read right now. Retry later.', { postgres: stateOf(err) }, { cause: err }) : err;
}

/** What the error details show as `postgres`: the SQLSTATE, `timeout` for an answer that did not come in time. */
function stateOf(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  return /Query read timeout|connection timeout|timeout exceeded/i.test(String((err as Error).message ?? '')) ? 'timeout' : 'unknown';
}
