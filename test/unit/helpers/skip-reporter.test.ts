import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { skipSummary } from '../../helpers/skip-reporter.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';

afterAll(removeTempDirs);

const VITEST = fileURLToPath(new URL('../../../node_modules/vitest/vitest.mjs', import.meta.url));
const REPORTER = fileURLToPath(new URL('../../helpers/skip-reporter.ts', import.meta.url));

/** Runs vitest on `files` (name → source, with vitest's globals) with the skip reporter; resolves with its output. */
function runVitest(files: Record<string, string>): Promise<{ code: number | null; stdout: string }> {
  const dir = makeTempDir('hookrelay-skip-reporter-');
  for (const [name, source] of Object.entries(files)) writeFileSync(join(dir, name), source);
  const config = { test: { include: ['*.test.ts'], globals: true, reporters: ['default', REPORTER] } };
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

describe('skipSummary', () => {
  it('counts the files skipped for each reason, and ignores suites skipped without one', () => {
    expect(
      skipSummary([
        { file: 'a.test.ts', suite: 'console (skipped: no Chromium found; set CHROMIUM_PATH)' },
        { file: 'a.test.ts', suite: 'console again (skipped: no Chromium found; set CHROMIUM_PATH)' },
        { file: 'b.test.ts', suite: 'dashboard (skipped: no Chromium found; set CHROMIUM_PATH)' },
        { file: 'c.test.ts', suite: 'shared store (skipped: no PostgreSQL at 127.0.0.1:5432)' },
        { file: 'd.test.ts', suite: 'skipped by hand' },
      ]),
    ).toEqual(['SKIPPED 2 test file(s): no Chromium found; set CHROMIUM_PATH', 'SKIPPED 1 test file(s): no PostgreSQL at 127.0.0.1:5432']);
    expect(skipSummary([])).toEqual([]);
  });
});

describe('the skip reporter in a vitest run', { timeout: 60_000 }, () => {
  it('ends the output with why suites were skipped; says nothing when none was', async () => {
    const skipped = "describe.skip('browser (skipped: no Chromium found; set CHROMIUM_PATH)', () => { it('drives it', () => {}); });\n";
    const run = await runVitest({ 'a.test.ts': skipped, 'b.test.ts': skipped, 'c.test.ts': "it('runs', () => expect(1).toBe(1));\n" });
    expect(run.code).toBe(0);
    expect(run.stdout.trimEnd().split('\n').slice(-2)).toEqual(['Not run on this machine:', 'SKIPPED 2 test file(s): no Chromium found; set CHROMIUM_PATH']);

    const clean = await runVitest({ 'c.test.ts': "it('runs', () => expect(1).toBe(1));\n" });
    expect(clean.code).toBe(0);
    expect(clean.stdout).not.toContain('Not run on this machine');
  });
});
