import sift from 'sift';
import { ALLOWED_OPERATORS, validateQuery, type QueryIssue } from './query-validation.js';
import type { RuleEventInput } from './types.js';

export type Tester = (item: unknown) => boolean;

export interface MatchCriteria {
  on: readonly string[];
  source?: string;
  where: Record<string, unknown>;
  enabled: boolean;
}

export interface RuleMatcher {
  matches(input: RuleEventInput): boolean;
}

export type MatcherCompilation = { ok: true; matcher: RuleMatcher } | { ok: false; issues: QueryIssue[] };

// sift's default set minus $where, which would evaluate strings from the rule file as code.
const OPERATIONS = Object.fromEntries(
  ALLOWED_OPERATORS.map((name) => [name, (sift as unknown as Record<string, (...args: never[]) => unknown>)[name]]),
);

/** A sift tester with the allowed operators only; throws for a query sift cannot compile. */
export function compileQuery(query: Record<string, unknown>): Tester {
  return sift.createQueryTester(query, { operations: OPERATIONS as never }) as Tester;
}

/** Compiles `on`, `source` and `where` once, at load; matching an event is then synchronous and cheap. */
export function compileMatcher(criteria: MatchCriteria): MatcherCompilation {
  const issues = validateQuery(criteria.where);
  if (issues.length > 0) return { ok: false, issues };
  let whole: Tester;
  try {
    whole = compileQuery(criteria.where);
  } catch (err) {
    return { ok: false, issues: [{ path: [], message: (err as Error).message }] };
  }
  const takesEvent = (event: string) => criteria.on.includes('*') || criteria.on.includes(event);
  const takesSource = (source: string) => criteria.source === undefined || criteria.source === source;

  return {
    ok: true,
    matcher: {
      matches: (input) => criteria.enabled && takesEvent(input.event) && takesSource(input.source) && whole(input.body),
    },
  };
}

/** A value in one short line of JSON, for messages. */
export function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
