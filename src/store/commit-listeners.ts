/** Callbacks a store calls after a commit, in this process (delivery loops, event streams). */
export class CommitListeners {
  private readonly listeners = new Set<() => void>();

  add(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get size(): number {
    return this.listeners.size;
  }

  /**
   * Calls every listener. A listener that throws does not stop the others, and never reaches the commit
   * that called it: that commit's events are stored and are answered as such (the error is a warning).
   */
  notify(): void {
    for (const listener of this.listeners) {
      try {
        listener();
      } catch (err) {
        process.emitWarning(err instanceof Error ? err : new Error(String(err)), 'CommitListenerWarning');
      }
    }
  }
}
