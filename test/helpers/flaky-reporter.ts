import type { Reporter, TestCase } from 'vitest/node';

/**
 * Lists, after the run, every test that failed and then passed on a retry (CI retries, see
 * vitest.config.ts), so a retried pass stays visible instead of looking like a clean one.
 */
export default class FlakyReporter implements Reporter {
  private readonly flaky: string[] = [];

  onTestCaseResult(testCase: TestCase): void {
    const diagnostic = testCase.diagnostic();
    if (diagnostic?.flaky) {
      this.flaky.push(`${testCase.module.relativeModuleId} > ${testCase.fullName} (passed after ${diagnostic.retryCount} retr${diagnostic.retryCount === 1 ? 'y' : 'ies'})`);
    }
  }

  onTestRunEnd(): void {
    if (this.flaky.length === 0) return;
    process.stdout.write(`\n${this.flaky.length} flaky test(s), passed only on a retry:\n`);
    for (const line of this.flaky) process.stdout.write(`FLAKY ${line}\n`);
  }
}
