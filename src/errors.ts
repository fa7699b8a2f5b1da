/**
 * Typed errors with a stable `code` and an HTTP status. Modules throw these; only the HTTP layer turns
 * them into responses (see `toErrorBody`). Every code is listed in docs/errors.md; a test keeps the two
 * in step.
 */
export const ERROR_CODES = {
  unsupported_media_type: { status: 415, summary: 'The request body is not JSON (Content-Type must be application/json or */*+json).' },
  payload_too_large: { status: 413, summary: 'The request body is larger than the configured limit.' },
  missing_signature: { status: 401, summary: 'The signature header(s) the source requires are absent or empty.' },
  invalid_signature: { status: 401, summary: 'No configured secret produces the given signature, or the timestamp is outside the tolerance.' },
  invalid_json: { status: 400, summary: 'The body is not well-formed JSON (or not valid UTF-8).' },
  invalid_payload: { status: 422, summary: 'The JSON does not match the event schema; details lists each issue with its path.' },
  too_deeply_nested: { status: 422, summary: 'The JSON nests objects and arrays deeper than the configured limit (maxDepth).' },
  unknown_source: { status: 404, summary: 'No source with that name is configured.' },
  not_found: { status: 404, summary: 'No such route or resource.' },
  method_not_allowed: { status: 405, summary: 'The route exists but not for this HTTP method.' },
  bad_request: { status: 400, summary: 'The request is malformed (query or path parameters).' },
  validation_failed: { status: 422, summary: 'A request to the admin or mock API failed validation; details lists each issue with its path.' },
  unauthorized: { status: 401, summary: 'Missing or wrong bearer token.' },
  forbidden: { status: 403, summary: 'Authenticated, but the request may not be made this way (a console mutation without its CSRF token or from another origin).' },
  conflict: { status: 409, summary: 'The resource is not in a state that allows this (a delivery already pending).' },
  rule_mismatch: { status: 422, summary: 'The event does not match the rule named for a replay; details.reason says why (send force: true to replay anyway).' },
  rule_removed: { status: 409, summary: "The delivery's rule is no longer in the rule set: a retry would dead-letter it again at once." },
  original_routing_unknown: { status: 409, summary: 'The event was stored before rule sets were kept: its original routing is unknown; replay it with route current.' },
  gone: { status: 410, summary: 'The resource existed but can no longer be used (a one-time checkout link already bought).' },
  store_copy_conflict: { status: 409, summary: 'store copy: the target holds different data under an id or transfer of the source (another instance, or another source); nothing of the batch was written.' },
  store_unavailable: { status: 503, summary: 'The event store could not commit (read-only, disk full, locked); nothing was stored, retry later.' },
  too_many_streams: { status: 503, summary: 'As many event streams are open as the server allows (admin.streams.max); retry later.' },
  server_busy: { status: 503, summary: 'The receiver holds as many request bodies as server.maxBufferedBytes allows; nothing was read or stored, retry after Retry-After seconds.' },
  too_many_attempts: { status: 429, summary: 'Too many failed authentications from this client address (admin.authFailures); retry after Retry-After seconds.' },
  shutting_down: { status: 503, summary: 'The server is shutting down and takes no new work.' },
  not_a_receiver: { status: 503, summary: 'This node runs role worker and receives no webhooks; send them to a node with role all or receiver.' },
  request_timeout: { status: 408, summary: 'The client did not send the whole request in time.' },
  internal_error: { status: 500, summary: 'An unexpected failure; the log line with the request id has the cause.' },
  invalid_config: { status: 500, summary: 'A setting is invalid; start-up stops and names the setting.' },
  invalid_rules: { status: 500, summary: 'A rule file is invalid; reported as file:line path: message.' },
  invalid_contracts: { status: 500, summary: 'A pinned contract file is invalid; reported as file:path: message.' },
  already_released: { status: 409, summary: 'The quarantined event was released before: it was routed then, and is not routed again.' },
  not_quarantined: { status: 409, summary: 'The event was never held in quarantine: there is nothing to release.' },
  transfer_stored_since: { status: 409, summary: 'The held body\'s transfer was stored since from another body (a corrected copy): releasing it would route the purchase twice (send force: true to release anyway).' },
  release_refused: { status: 422, summary: 'Neither the event schema nor the pinned contract accepts the held body yet; details lists the issues (send force: true to release anyway).' },
  event_quarantined: { status: 409, summary: 'The event is held in quarantine: release it (which routes it once) instead of replaying it.' },
  destination_refused: { status: 400, summary: 'A destination URL resolves to an address the SSRF guard refuses.' },
} as const satisfies Record<string, { status: number; summary: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export class HookrelayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: unknown;

  constructor(code: ErrorCode, message: string, details?: unknown, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'HookrelayError';
    this.code = code;
    this.status = ERROR_CODES[code].status;
    this.details = details ?? null;
  }
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details: unknown };
}

export function toErrorBody(err: HookrelayError): ErrorBody {
  return { error: { code: err.code, message: err.message, details: err.details } };
}

/** Any thrown value becomes a HookrelayError; unknown failures are internal errors without leaking internals. */
export function asHookrelayError(err: unknown): HookrelayError {
  if (err instanceof HookrelayError) return err;
  return new HookrelayError('internal_error', 'Internal error', null, { cause: err });
}
