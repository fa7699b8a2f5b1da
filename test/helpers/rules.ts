import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
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

/** The example rule files the package ships in rules/, by name: a user's own files there never reach a test. */
export const SHIPPED_EXAMPLE_RULES = ['local-sink.yaml', 'slack-card-purchases.yaml'] as const;

/** A fresh rules directory holding copies of the shipped example files (all of them, or the ones named). */
export function shippedExampleRulesDir(names: readonly string[] = SHIPPED_EXAMPLE_RULES): string {
  const dir = makeTempDir('hookrelay-examples-');
  for (const name of names) copyFileSync(fileURLToPath(new URL(`../../rules/${name}`, import.meta.url)), join(dir, name));
  return dir;
}
