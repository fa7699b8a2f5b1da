import jsonata from 'jsonata';
import { transformSandbox } from './transform-sandbox.js';
import type { RenderedBody, RuleEventInput } from './types.js';

export { TransformError } from './transform-error.js';

/**
 * Guards against runaway expressions (infinite recursion, endless loops, huge ranges). jsonata checks
 * them between evaluation steps; the sandbox that runs every transform (transform-sandbox.ts) enforces the
 * time limit on everything else, a single slow built-in included, by ending the thread that runs it.
 */
export const TRANSFORM_LIMITS = { timeoutMs: 1_000, maxDepth: 1_000, maxSequenceLength: 100_000 } as const;

const JSON_CONTENT_TYPE = 'application/json';

/**
 * The options every transform is compiled with: here, where a rule is loaded (syntax check), and in the
 * sandbox that evaluates it, so both read an expression the same way.
 */
export function jsonataOptions(timeoutMs: number = TRANSFORM_LIMITS.timeoutMs): jsonata.JsonataOptions {
  return {
    timeout: timeoutMs,
    stack: TRANSFORM_LIMITS.maxDepth,
    sequence: TRANSFORM_LIMITS.maxSequenceLength,
  };
}

export interface RuleTransform {
  readonly hasTransform: boolean;
  render(input: RuleEventInput): Promise<RenderedBody>;
}

export type TransformCompilation =
  | { ok: true; transform: RuleTransform }
  | { ok: false; message: string; /** jsonata's character offset of the failing token */ position: number };

interface JsonataFailure {
  message?: string;
  position?: number;
}

const untouched: RuleTransform = {
  hasTransform: false,
  // No transform: the exact bytes received go out, so downstream signatures over them still verify.
  render: async (input) => ({ body: input.raw, contentType: JSON_CONTENT_TYPE }),
};

/**
 * Parses the expression once, at load; syntax errors come back with their position. Rendering runs in the
 * sandbox, never on the calling thread: a transform's time, memory and output are bounded there.
 */
export function compileTransform(expression: string | undefined): TransformCompilation {
  if (expression === undefined) return { ok: true, transform: untouched };
  try {
    jsonata(expression, jsonataOptions());
  } catch (err) {
    const failure = err as JsonataFailure;
    return { ok: false, message: `JSONata syntax error: ${failure.message ?? String(err)}`, position: failure.position ?? 0 };
  }
  return {
    ok: true,
    transform: {
      hasTransform: true,
      render: (input) => transformSandbox().render(expression, input),
    },
  };
}
