import type { z } from 'zod';
import { HookrelayError, type ErrorCode } from '../../errors.js';

/** One validation problem as every hookrelay error body reports it (`details.issues`). */
export interface IssueDetail {
  /** Dotted path such as `filter.receivedFrom`; `(root)` for the whole body or query. */
  path: string;
  message: string;
  code: string;
}

export function issueDetails(error: z.ZodError, prefix: readonly PropertyKey[] = []): IssueDetail[] {
  return error.issues.map((issue) => ({
    path: [...prefix, ...issue.path].map(String).join('.') || '(root)',
    message: issue.message,
    code: issue.code,
  }));
}

/**
 * Parses one part of a request with its schema. Path and query problems are a malformed request (400
 * `bad_request`), body problems a failed validation (422 `validation_failed`); both list every issue.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, part: 'path' | 'query' | 'body'): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const code: ErrorCode = part === 'body' ? 'validation_failed' : 'bad_request';
  const issues = issueDetails(result.error);
  throw new HookrelayError(code, `The request ${part} is invalid: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { issues });
}
