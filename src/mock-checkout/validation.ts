import type { z } from 'zod';
import { HookrelayError, type ErrorCode } from '../errors.js';

/** One validation problem, as every hookrelay error body reports it (`details.issues`). */
export interface IssueDetail {
  /** Dotted path, e.g. `webhookUrls.1`; `(root)` for the body itself. */
  path: string;
  message: string;
  code: string;
}

export function issueDetails(error: z.ZodError): IssueDetail[] {
  return error.issues.map((issue) => ({
    path: issue.path.map(String).join('.') || '(root)',
    message: issue.message,
    code: issue.code,
  }));
}

/** Parses with a zod schema or throws `validation_failed` (422) — or another code, e.g. bad_request for a query. */
export function parseOrThrow<S extends z.ZodType>(
  schema: S,
  input: unknown,
  what: string,
  code: ErrorCode = 'validation_failed',
): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) {
    const issues = issueDetails(result.error);
    // The message names each problem, so a terminal (curl) shows what to fix without reading details.
    throw new HookrelayError(code, `${what} is invalid: ${issues.map((issue) => `${issue.path} ${issue.message}`).join('; ')}`, { issues });
  }
  return result.data;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

/** Path ids must be UUIDs: anything else is a malformed request (400), not an unknown checkout (404). */
export function requireUuid(value: string | undefined, what = 'checkout id'): string {
  if (!isUuid(value)) throw new HookrelayError('bad_request', `${what} must be a UUID`);
  return value.toLowerCase();
}
