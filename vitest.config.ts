import { defineConfig } from 'vitest/config';

// CI runs three suites on a shared 2-core machine, where a timing-sensitive test can lose a race to
// the machine's load once: HOOKRELAY_TEST_RETRY lets .ci/run retry a failed test, and the flaky
// reporter names every test that passed only on a retry. Locally a failure fails at once. The skip
// reporter ends the output with the tests a missing browser or PostgreSQL server left unrun, and why.
const retry = Number(process.env.HOOKRELAY_TEST_RETRY ?? 0);

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    retry,
    reporters: ['default', './test/helpers/flaky-reporter.ts', './test/helpers/skip-reporter.ts'],
    // Integration tests start servers and child processes; two forks match the 2-core machines we target.
    pool: 'forks',
    maxWorkers: 2,
  },
});
