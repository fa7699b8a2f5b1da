import { HookrelayError } from '../errors.js';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** Parses the raw body as JSON; invalid UTF-8 is refused rather than silently replaced. */
export function parseJsonBody(body: Uint8Array): unknown {
  let text: string;
  try {
    text = strictUtf8.decode(body);
  } catch {
    throw new HookrelayError('invalid_json', 'The body is not valid UTF-8.');
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    const reason = err instanceof SyntaxError ? err.message : 'nesting too deep';
    throw new HookrelayError('invalid_json', `The body is not valid JSON: ${reason}`);
  }
}
