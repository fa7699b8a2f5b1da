import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { firstFailure } from '../../helpers/flaky-reporter.js';
import { runVitest } from '../../helpers/run-vitest.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';

afterAll(removeTempDirs);

const REPORTER = fileURLToPath(new URL('../../helpers/flaky-reporter.ts', import.meta.url));

describe('firstFailure', () => {
  it('is the first line of the first error with a message, shortened; null without one', () => {
    expect(firstFailure([{}, { message: 'expected 1 to be 2\n\n- Expected\n+ Received' }, { message: 'later' }])).toBe('expected 1 to be 2');
    expect(firstFailure([{ message: 'x'.repeat(300) }])).toBe(`${'x'.repeat(199)}…`);
    expect(firstFailure([])).toBeNull();
    expect(firstFailure(undefined)).toBeNull();
  });
});

describe('the flaky reporter in a vitest run', { timeout: 60_000 }, () => {
  it('names a test that passed only on a retry, with the error of its failed attempt', async () => {
    const failsOnce = "let tries = 0;\nit('settles', () => { tries += 1; expect(tries).toBe(2); });\nit('steady', () => expect(1).toBe(1));\n";
    const run = await runVitest({ 'a.test.ts': failsOnce }, REPORTER, { retry: 1 });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('1 flaky test(s), passed only on a retry:');
    expect(run.stdout).toContain('FLAKY a.test.ts > settles (passed after 1 retry); first failure: expected 1 to be 2');
    expect(run.stdout).not.toContain('> steady');
  });
});
