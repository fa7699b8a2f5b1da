import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeTempDir } from './temp-dir.js';

const VITEST = fileURLToPath(new URL('../../node_modules/vitest/vitest.mjs', import.meta.url));

/**
 * Runs vitest in a child process on `files` (name → source, with vitest's globals) with `reporter` (a path)
 * beside the default one and the `test` options given; resolves with its exit code and output.
 */
export function runVitest(files: Record<string, string>, reporter: string, test: Record<string, unknown> = {}): Promise<{ code: number | null; stdout: string }> {
  const dir = makeTempDir('hookrelay-reporter-');
  for (const [name, source] of Object.entries(files)) writeFileSync(join(dir, name), source);
  const config = { test: { include: ['*.test.ts'], globals: true, reporters: ['default', reporter], ...test } };
  writeFileSync(join(dir, 'vitest.config.mjs'), `export default ${JSON.stringify(config)};\n`);
  const child = spawn(process.execPath, [VITEST, 'run', '--root', dir, '--config', join(dir, 'vitest.config.mjs')], {
    env: { PATH: process.env.PATH ?? '', CI: 'true' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.resume();
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout })));
}
