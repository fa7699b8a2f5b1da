import type jsonata from 'jsonata';

/** What bounds one evaluation inside the sandbox. */
export interface EvaluationLimits {
  timeoutMs: number;
  maxOutputBytes: number;
}

/** What a transform sees of an event. */
export interface EvaluationInput {
  body: unknown;
  event: string;
  source: string;
}

export type EvaluationResult =
  | { ok: true; body: Uint8Array; contentType: string }
  | { ok: false; code: string; message: string };

interface JsonataFailure {
  code?: string;
  message?: string;
  position?: number;
}

const JSON_CONTENT_TYPE = 'application/json';
const encoder = new TextEncoder();

export function timeLimitMessage(timeoutMs: number): string {
  return `transform exceeded its time limit of ${timeoutMs} ms`;
}

export function outputLimitMessage(bytes: number, maxOutputBytes: number, exact: boolean): string {
  return `transform produced ${exact ? '' : 'at least '}${bytes} bytes, more than the ${maxOutputBytes} allowed`;
}

/**
 * Evaluates a compiled transform and renders its result as a JSON body within `limits`. Runs in the
 * sandbox's thread; every failure comes back as a code and a message the delivery is dead-lettered with.
 */
export async function evaluateTransform(compiled: jsonata.Expression, input: EvaluationInput, limits: EvaluationLimits): Promise<EvaluationResult> {
  let result: unknown;
  try {
    // $event and $source let one expression serve several events without digging them out of the body.
    result = await compiled.evaluate(input.body, { event: input.event, source: input.source });
  } catch (err) {
    const failure = err as JsonataFailure;
    const code = failure.code ?? 'evaluation_failed';
    if (code === 'D1012') return { ok: false, code: 'transform_timeout', message: timeLimitMessage(limits.timeoutMs) };
    const where = failure.position === undefined ? '' : ` at position ${failure.position}`;
    return { ok: false, code, message: `transform failed${where}: ${code} ${failure.message ?? String(err)}` };
  }
  if (result === undefined) return { ok: false, code: 'undefined_result', message: 'transform produced no value (a path in it matched nothing)' };
  // Measured before serialising: a string doubled 25 times is cheap to hold as a rope and costly to flatten.
  const least = jsonSizeAtLeast(result);
  if (least > limits.maxOutputBytes) return { ok: false, code: 'transform_too_large', message: outputLimitMessage(least, limits.maxOutputBytes, false) };
  const json = JSON.stringify(result);
  if (json === undefined) return { ok: false, code: 'not_json', message: 'transform produced a value that is not JSON (a function)' };
  // Its own ArrayBuffer (never Buffer's shared pool), so it can be handed to the caller's thread without a copy.
  const body = encoder.encode(json);
  if (body.length > limits.maxOutputBytes) return { ok: false, code: 'transform_too_large', message: outputLimitMessage(body.length, limits.maxOutputBytes, true) };
  return { ok: true, body, contentType: JSON_CONTENT_TYPE };
}

/**
 * A lower bound of `value`'s JSON size in bytes, without serialising it: a string counts its UTF-16 length
 * (never more than its UTF-8 bytes) plus its quotes, so a result over the cap is refused before it is built.
 */
export function jsonSizeAtLeast(value: unknown): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === 'string') total += item.length + 2;
    else if (typeof item === 'number' || typeof item === 'boolean') total += String(item).length;
    else if (item === null) total += 4;
    else if (Array.isArray(item)) {
      total += 1 + item.length;
      for (const element of item) stack.push(element);
    } else if (typeof item === 'object') {
      const entries = Object.entries(item as Record<string, unknown>);
      total += 1 + entries.length;
      for (const [key, child] of entries) {
        total += key.length + 3;
        stack.push(child);
      }
    }
  }
  return total;
}
