import { HookrelayError } from '../errors.js';

/**
 * Whether JSON `bytes` nest objects and arrays more than `maxDepth` levels deep: one pass over the bytes,
 * counting brackets outside strings, far cheaper than the JSON parse it guards. `{"a":[1]}` has 2 levels.
 */
export function nestsDeeperThan(bytes: Uint8Array, maxDepth: number): boolean {
  let depth = 0;
  for (let i = 0; i < bytes.length; i += 1) {
    const byte = bytes[i]!;
    if (byte === 0x22) {
      // Skip the string with a native search for its closing quote: one after an even run of backslashes.
      for (;;) {
        i = bytes.indexOf(0x22, i + 1);
        if (i === -1) return false;
        let backslashes = 0;
        while (bytes[i - 1 - backslashes] === 0x5c) backslashes += 1;
        if (backslashes % 2 === 0) break;
      }
    } else if (byte === 0x7b || byte === 0x5b) {
      depth += 1;
      if (depth > maxDepth) return true;
    } else if (byte === 0x7d || byte === 0x5d) depth -= 1;
  }
  return false;
}

/** Refuses a body nested more than `maxDepth` levels: 422 too_deeply_nested. */
export function checkNesting(bytes: Uint8Array, maxDepth: number): void {
  if (nestsDeeperThan(bytes, maxDepth)) {
    throw new HookrelayError('too_deeply_nested', `The body nests objects and arrays more than ${maxDepth} levels deep.`, { maxDepth });
  }
}
