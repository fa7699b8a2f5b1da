import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { skipSummary } from '../../helpers/skip-reporter.js';
import { runVitest } from '../../helpers/run-vitest.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';

afterAll(removeTempDirs);

const REPORTER = fileURLToPath(new URL('../../helpers/skip-reporter.ts', import.meta.url));

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
    const run = await runVitest({ 'a.test.ts': skipped, 'b.test.ts': skipped, 'c.test.ts': "it('runs', () => expect(1).toBe(1));\n" }, REPORTER);
    expect(run.code).toBe(0);
    expect(run.stdout.trimEnd().split('\n').slice(-2)).toEqual(['Not run on this machine:', 'SKIPPED 2 test file(s): no Chromium found; set CHROMIUM_PATH']);

    const clean = await runVitest({ 'c.test.ts': "it('runs', () => expect(1).toBe(1));\n" }, REPORTER);
    expect(clean.code).toBe(0);
    expect(clean.stdout).not.toContain('Not run on this machine');
  });
});
