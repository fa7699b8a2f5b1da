interface Entry<T> {
  value: T;
  index: number;
}

/**
 * A set for things that come and go at request rate (in-flight responses, attempts, abort callbacks): a
 * dense array with swap-remove, where `add` returns the function that removes the item again.
 *
 * Not a Set or Map: under steady churn a Set rebuilds its hash table every few operations, and V8 keeps each
 * replaced table linked to its successor (for iterators) until a full collection. Once one table of that chain
 * sits in the old generation, every item added afterwards, with everything it references, survives its
 * scavenges and is promoted. For the ingest server's in-flight responses under load a Set means many times
 * the promoted bytes and frequent full collections, each one a burst of slow requests.
 */
export class InFlightSet<T> implements Iterable<T> {
  private readonly entries: Entry<T>[] = [];

  /** Adds `value`; the returned function removes it (calling it again does nothing). */
  add(value: T): () => void {
    const entry: Entry<T> = { value, index: this.entries.length };
    this.entries.push(entry);
    return () => this.remove(entry);
  }

  get size(): number {
    return this.entries.length;
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (const entry of [...this.entries]) yield entry.value;
  }

  private remove(entry: Entry<T>): void {
    const { index } = entry;
    if (index < 0 || this.entries[index] !== entry) return;
    const last = this.entries.pop()!;
    if (last !== entry) {
      this.entries[index] = last;
      last.index = index;
    }
    entry.index = -1;
  }
}
