import jsonata from 'jsonata';
import { LinearRegExp, type RegexMode } from './regex-engine.js';
import { refusedRegexLiterals } from './transform-regexes.js';
import type { RenderedBody, RuleEventInput } from './types.js';

/**
 * Guards against runaway expressions (infinite recursion, endless loops, huge ranges). jsonata checks
 * them between evaluation steps, so a single slow built-in is not interrupted; regexes run on the
 * linear-time engine (regex-engine.ts), so no pattern is such a built-in.
 */
export const TRANSFORM_LIMITS = { timeoutMs: 1_000, maxDepth: 1_000, maxSequenceLength: 100_000 } as const;

const JSON_CONTENT_TYPE = 'application/json';

/** Raised when a transform cannot produce a body for an event; the caller dead-letters that delivery. */
export class TransformError extends Error {
  /** jsonata's error code (e.g. T2001, D1012 for the time limit), or `undefined_result` / `not_json`. */
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TransformError';
    this.code = code;
  }
}

export interface RuleTransform {
  readonly hasTransform: boolean;
  render(input: RuleEventInput): Promise<RenderedBody>;
}

export type TransformCompilation =
  | { ok: true; transform: RuleTransform; /** `kept` mode: why it cannot be evaluated (a regex the engine cannot run) */ unavailable?: string }
  | { ok: false; message: string; /** jsonata's character offset of the failing token */ position: number };

interface JsonataFailure {
  code?: string;
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
 * see RegexMode) come back with their position.
 */
export function compileTransform(expression: string | undefined, mode: RegexMode = 'new'): TransformCompilation {
  if (expression === undefined) return { ok: true, transform: untouched };
  let compiled: jsonata.Expression;
  try {
    compiled = jsonata(expression, {
      timeout: TRANSFORM_LIMITS.timeoutMs,
      stack: TRANSFORM_LIMITS.maxDepth,
      sequence: TRANSFORM_LIMITS.maxSequenceLength,
      RegexEngine: LinearRegExp as unknown as RegExpConstructor,
    });
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
      async render(input) {
        const result = await evaluate(compiled, input);
        if (result === undefined) {
          throw new TransformError('undefined_result', 'transform produced no value (a path in it matched nothing)');
        }
        const json = JSON.stringify(result);
        if (json === undefined) throw new TransformError('not_json', 'transform produced a value that is not JSON (a function)');
        return { body: Buffer.from(json), contentType: JSON_CONTENT_TYPE };
      },
    },
  };
}

async function evaluate(compiled: jsonata.Expression, input: RuleEventInput): Promise<unknown> {
  try {
    // $event and $source let one expression serve several events without digging them out of the body.
    return await compiled.evaluate(input.body, { event: input.event, source: input.source });
  } catch (err) {
    const failure = err as JsonataFailure;
    const code = failure.code ?? 'evaluation_failed';
    const where = failure.position === undefined ? '' : ` at position ${failure.position}`;
    throw new TransformError(code, `transform failed${where}: ${code} ${failure.message ?? String(err)}`, { cause: err });
  }
}
