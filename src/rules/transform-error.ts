/** Raised when a transform cannot produce a body for an event; the caller dead-letters that delivery. */
export class TransformError extends Error {
  /**
   * jsonata's error code (e.g. T2001), `undefined_result`, `not_json`, or one of the sandbox's limits:
   * `transform_timeout`, `transform_too_large`, `transform_out_of_memory`, `transform_crashed`.
   */
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TransformError';
    this.code = code;
  }
}
