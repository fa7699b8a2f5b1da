/**
 * Runs a background pass on a timer, one at a time: `runOnce` joins a pass already running, and `stop`
 * ends the timer and waits for the running pass (which sees `stopping` and ends at its next boundary).
 * Retention and schema learning share it; each decides how long to wait after a pass (`nextDelayMs`).
 */
export class PassTimer<R> {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<R> | null = null;
  private stopped = false;

  constructor(
    private readonly pass: () => Promise<R>,
    /** The wait after a pass: its report, or undefined when it failed (`onError` has seen why). */
    private readonly nextDelayMs: (report: R | undefined) => number,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  get stopping(): boolean {
    return this.stopped;
  }

  start(firstDelayMs: number): void {
    if (this.timer || this.stopped) return;
    this.schedule(firstDelayMs);
  }

  /** Runs one pass now (or joins the one running). */
  runOnce(): Promise<R> {
    this.running ??= this.pass().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** Stops the timer and waits for a running pass to end. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.runOnce()
        .catch((err: unknown) => {
          this.onError(err);
          return undefined;
        })
        .then((report) => {
          if (!this.stopped) this.schedule(this.nextDelayMs(report));
        });
    }, delayMs);
    this.timer.unref();
  }
}
