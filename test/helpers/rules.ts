import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from './temp-dir.js';

/** A fresh rules directory holding the given files (name → YAML text). */
export function rulesDirWith(files: Record<string, string>): string {
  const dir = makeTempDir('hookrelay-rules-');
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

/** Delivery settings for tests: loopback sinks allowlisted explicitly, quick polling. */
export const TEST_DELIVERY = { allowNetworks: ['127.0.0.1/32'], pollIntervalMs: 50 };

/** Polls `check` until it returns a truthy value or the time runs out. */
export async function eventually<T>(check: () => Promise<T | undefined | null | false> | T | undefined | null | false, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
