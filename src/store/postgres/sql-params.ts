import { createHash } from 'node:crypto';
/** Positional parameters of one dynamically built statement: `add(value)` returns its placeholder ($1, $2, ...). */
export class SqlParams {
  readonly values: unknown[] = [];

  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/**
 * `query` with a client-side deadline of its own (node-postgres' query_timeout, which its types omit), in place
 * of the connection's; none when `timeoutMs` is undefined or infinite.
 */
export function withDeadline<Q extends { text: string }>(query: Q, timeoutMs: number | undefined): Q {
  if (timeoutMs === undefined || !Number.isFinite(timeoutMs)) return query;
  return { ...query, query_timeout: Math.max(1, Math.ceil(timeoutMs)) };
}

/** A statement prepared once per connection under a fixed name (node-postgres caches it by name). */
export interface NamedStatement {
  name: string;
  text: string;
}

export function named(name: string, text: string): NamedStatement {
  return { name: `hookrelay_${name}`, text };
}

/** A statement built at run time, prepared under a name its text decides: one per shape and connection. */
export function namedByShape(kind: string, text: string): NamedStatement {
  return named(`${kind}_${createHash('sha256').update(text).digest('hex').slice(0, 16)}`, text);
}
