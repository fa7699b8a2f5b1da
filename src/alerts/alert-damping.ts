export interface DampingOptions {
  /** At most one message per subject in this long. */
  windowMs: number;
  send: (text: string) => unknown;
  now?: () => number;
}

interface Subject {
  lastSentAt: number;
  /** The text of the latest suppressed message: sent when the window ends, so the channel shows the last state. */
  pending: string | null;
  suppressed: number;
  timer: NodeJS.Timeout | null;
}

/**
 * Damps alerts per subject (a destination, or the dead-letter count): the first message goes at once, later
 * ones within the window are held back and counted; when the window ends, the latest of them goes with the
 * count of those suppressed. A flapping destination makes one message per window, and the channel still
 * ends on its current state.
 */
export class AlertDamping {
  private readonly subjects = new Map<string, Subject>();
  private readonly now: () => number;

  constructor(private readonly options: DampingOptions) {
    this.now = options.now ?? Date.now;
  }

  notify(subject: string, text: string): void {
    const now = this.now();
    const state = this.subjects.get(subject);
    if (!state || now - state.lastSentAt >= this.options.windowMs) {
      this.subjects.set(subject, { lastSentAt: now, pending: null, suppressed: 0, timer: state?.timer ?? null });
      this.options.send(text);
      return;
    }
    state.pending = text;
    state.suppressed += 1;
    state.timer ??= setTimeout(() => this.flush(subject), state.lastSentAt + this.options.windowMs - now);
    state.timer.unref();
  }

  /** Drops held messages (shutdown). */
  close(): void {
    for (const state of this.subjects.values()) if (state.timer) clearTimeout(state.timer);
    this.subjects.clear();
  }

  private flush(subject: string): void {
    const state = this.subjects.get(subject);
    if (!state) return;
    state.timer = null;
    if (state.pending === null) return;
    const n = state.suppressed;
    const text = `${state.pending} (${n} alert${n === 1 ? '' : 's'} about this held back since the last message; this is the latest)`;
    state.lastSentAt = this.now();
    state.pending = null;
    state.suppressed = 0;
    this.options.send(text);
  }
}
