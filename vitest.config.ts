import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration tests start servers and child processes; two forks match the 2-core machines we target.
    pool: 'forks',
    maxWorkers: 2,
  },
});
