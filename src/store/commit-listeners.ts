/** Callbacks a store calls after a commit, in this process (delivery workers, event streams). */
export class CommitListeners {
  private readonly listeners = new Set<() => void>();

  add(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get size(): number {
    return this.listeners.size;
  }

  notify(): void {
    for (const listener of this.listeners) listener();
  }
}
