import jsonata from 'jsonata';
import { LinearRegExp, type RegexMode } from './regex-engine.js';
import { refusedRegexLiterals } from './transform-regexes.js';
import { transformSandbox } from './transform-sandbox.js';
import type { RenderedBody, RuleEventInput } from './types.js';

export { TransformError } from './transform-error.js';

/**
 * Guards against runaway expressions (infinite recursion, endless loops, huge ranges). jsonata checks
 * them between evaluation steps; the sandbox that runs every transform (transform-sandbox.ts) enforces the
 * time limit on everything else, a single slow built-in included, by ending the thread that runs it. Regexes
 * run on the linear-time engine (regex-engine.ts).
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
    RegexEngine: LinearRegExp as unknown as RegExpConstructor,
  };
}

export interface RuleTransform {
  readonly hasTransform: boolean;
  render(input: RuleEventInput): Promise<RenderedBody>;
}

export type TransformCompilation =
  | { ok: true; transform: RuleTransform; /** `kept` mode: why it cannot be evaluated (a regex the engine cannot run) */ unavailable?: string }
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
 * Parses the expression once, at load; syntax errors and regex literals the engine cannot run (`new` mode;
 * see RegexMode) come back with their position. Rendering runs in the sandbox, never on the calling thread:
 * a transform's time, memory and output are bounded there.
 */
export function compileTransform(expression: string | undefined, mode: RegexMode = 'new'): TransformCompilation {
  if (expression === undefined) return { ok: true, transform: untouched };
  let compiled: jsonata.Expression;
  try {
    compiled = jsonata(expression, jsonataOptions());
  } catch (err) {
    const failure = err as JsonataFailure;
    return { ok: false, message: `JSONata syntax error: ${failure.message ?? String(err)}`, position: failure.position ?? 0 };
  }
  const refused = refusedRegexLiterals(compiled.ast());
  if (refused.length > 0 && mode === 'new') return { ok: false, message: refused[0]!.message, position: refused[0]!.position };
  return {
    ok: true,
    ...(refused.length > 0 && { unavailable: refused.map((literal) => literal.message).join('; ') }),
    transform: {
      hasTransform: true,
      render: (input) => transformSandbox().render(expression, input),
    },
  };
}
