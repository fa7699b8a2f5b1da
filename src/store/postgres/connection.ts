import pg from 'pg';
import { parseIntoClientConfig } from 'pg-connection-string';
import { HookrelayError } from '../../errors.js';

/** What a node needs to reach the database; every field but `url` has a default that suits a small server. */
export interface PostgresSettings {
  /** postgres://user[:password]@host[:port]/database[?sslmode=...&sslrootcert=...] */
  url: string;
  /** Used when the URL carries no password (the operator's PGPASSWORD). */
  password?: string;
  /** Connections per node (ingest batches, claims, admin reads share them; notifications use one more). */
  poolSize: number;
  /** A statement running longer is cancelled (the write answers 503, the read 500/503). */
  statementTimeoutMs: number;
  /** A statement waiting this long for a row or table lock gives up. */
  lockTimeoutMs: number;
  /** Opening a connection, or waiting for a free one in the pool, gives up after this long. */
  connectTimeoutMs: number;
  /**
   * An acknowledgement waits at most this long for the commit that holds its event, queueing in the group
   * commit included; then it is answered 503 (default 5 s). Also the deadline of the readiness probe.
   */
  commitTimeoutMs?: number;
  /** LISTEN/NOTIFY wakes idle workers; off behind a pooler in transaction mode (polling carries the load). */
  notifications: boolean;
  /** Under steady load, how long an ingest batch gathers events from its first one before it commits (0: off). */
  commitIntervalMs?: number;
}

/** The default of `commitTimeoutMs`. */
export const COMMIT_TIMEOUT_MS = 5_000;

/**
 * A query still unanswered this long after the server would have cancelled it (statement_timeout) is given
 * up on the client: the server cannot be reached (a partition sends no reset), and the connection is thrown
 * away. Server-side cancellation, with its clear error, comes first when the server can answer; the margin
 * leaves room for what statement_timeout does not count, such as a COMMIT's flush on a busy disk.
 */
export const QUERY_DEADLINE_MARGIN_MS = 5_000;

/**
 * An idle connection is probed after this long without traffic (TCP keepalive), so that a peer gone without
 * a word (a partition, a failed-over host) is noticed and the connection replaced, not kept for hours.
 */
const KEEPALIVE_DELAY_MS = 10_000;

// bigint columns are unix ms and ids: both far below 2^53, read as numbers rather than strings.
const TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

/**
 * The client configuration for `settings`: TLS as the URL says (sslmode, sslrootcert, sslcert, sslkey, read by
 * pg-connection-string), the password from the URL or else `settings.password`, and the session settings
 * every connection needs, sent when it starts (no per-transaction SET: nothing a pooler would lose).
 */
export function clientConfig(settings: PostgresSettings): pg.ClientConfig {
  let parsed: pg.ClientConfig;
  try {
    parsed = parseIntoClientConfig(settings.url);
  } catch (err) {
    throw new HookrelayError('invalid_config', `database.url: not a PostgreSQL URL (${redactUrl(settings.url)}): ${(err as Error).message}`);
  }
  return {
    ...parsed,
    password: parsed.password || settings.password,
    types: TYPES,
    connectionTimeoutMillis: settings.connectTimeoutMs,
    statement_timeout: settings.statementTimeoutMs,
    lock_timeout: settings.lockTimeoutMs,
    // An acknowledgement promises the event is on the database's disk, whatever the server's default. No JIT:
    // every statement here is short, and a plan over many time partitions is costed as if it read them all
    // (they are skipped when it runs), which would pass JIT's thresholds and compile for 100 ms and more each
    // time. The URL's own options (such as -c search_path=... for a schema of its own) come first.
    options: [parsed.options, '-c synchronous_commit=on -c jit=off'].filter(Boolean).join(' '),
    application_name: parsed.application_name ?? 'hookrelay',
    // Every query has a client-side deadline. Node-postgres answers a late query with "Query read timeout";
    // a pooled query then removes its connection, which is destroyed, and the transaction helper does the same.
    query_timeout: settings.statementTimeoutMs + QUERY_DEADLINE_MARGIN_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
  };
}

export function openPool(settings: PostgresSettings): pg.Pool {
  const pool = new pg.Pool({ ...clientConfig(settings), max: settings.poolSize, idleTimeoutMillis: 30_000 });
  // A pooled connection the server ended while idle (a restart, pg_terminate_backend) is dropped by the
  // pool; without a listener its error event would end the process.
  pool.on('error', () => {});
  // The pool stops listening to a connection while it is checked out: one the server ends between the
  // queries of a transaction would end the process too. Its next query fails, and the pool drops it when
  // it is given back (no longer queryable).
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/** The URL with its password replaced: what logs and error messages may show. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*):[^@]*@/i, '$1:***@').replace(/([?&]password=)[^&]*/i, '$1***');
}
