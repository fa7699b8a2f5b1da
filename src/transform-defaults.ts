/**
 * How JSONata transforms are bounded by default (`rules.transform` in the configuration); the sandbox that
 * runs them uses the same values when it is not configured.
 */
export const TRANSFORM_DEFAULTS = Object.freeze({
  /** The longest one transform may run, whatever it does. */
  timeoutMs: 1_000,
  /** The largest JSON body a transform may produce. */
  maxOutputBytes: 1024 * 1024,
  /** Heap of each sandbox thread, in MiB. */
  maxMemoryMb: 64,
  /** Sandbox threads per thread that renders. */
  workers: 2,
});
