/** Positional parameters of one dynamically built statement: `add(value)` returns its placeholder ($1, $2, ...). */
export class SqlParams {
  readonly values: unknown[] = [];

  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/** A statement prepared once per connection under a fixed name (node-postgres caches it by name). */
export interface NamedStatement {
  name: string;
  text: string;
}

export function named(name: string, text: string): NamedStatement {
  return { name: `hookrelay_${name}`, text };
}
