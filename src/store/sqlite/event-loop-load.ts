import { performance, type EventLoopUtilization } from 'node:perf_hooks';

export interface EventLoopLoadOptions {
  /** Length of one measurement window. */
  windowMs?: number;
  /** Utilisation (0–1) of a window above which the loop counts as busy… */
  busyAbove?: number;
  /** …until a window drops below this one (hysteresis: no flapping around one threshold). */
  idleBelow?: number;
  /** Test seam: the utilisation since the previous reading. */
  utilisation?: () => number;
}

/** performance.eventLoopUtilization() over consecutive windows: the share of time the loop spent running code. */
function loopUtilisationSinceLastCall(): () => number {
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const delta = performance.eventLoopUtilization(now, last);
    last = now;
    return delta.utilization;
  };
}

/**
 * Whether the event loop has been busy lately. Commit pacing asks it: waiting to gather more events into one
 * commit saves CPU per event, which matters only when CPU is what limits the receiver. When the loop mostly
 * waits (a few senders, each sending its next event once the last is answered), the wait would only slow
 * those senders down.
 */
export class EventLoopLoad {
  private busyNow = false;
  private readonly timer: NodeJS.Timeout;

  constructor(options: EventLoopLoadOptions = {}) {
    const { windowMs = 100, busyAbove = 0.6, idleBelow = 0.4 } = options;
    const utilisation = options.utilisation ?? loopUtilisationSinceLastCall();
    this.timer = setInterval(() => {
      const used = utilisation();
      if (used > busyAbove) this.busyNow = true;
      else if (used < idleBelow) this.busyNow = false;
    }, windowMs);
    this.timer.unref();
  }

  busy(): boolean {
    return this.busyNow;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
