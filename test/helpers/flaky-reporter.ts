import type { Reporter, TestCase } from 'vitest/node';

/** The first line of the first error a test's failed attempts left, to say why it needed a retry. */
export function firstFailure(errors: readonly { message?: string }[] | undefined): string | null {
  const message = errors?.find((error) => error.message)?.message;
  if (!message) return null;
  const line = message.split('\n')[0]!.trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

/**
 * Lists, after the run, every test that failed and then passed on a retry (CI retries, see
 * vitest.config.ts), with the error of its failed attempt, so a retried pass stays visible instead of
 * looking like a clean one, and the next reader knows where it failed.
 */
export default class FlakyReporter implements Reporter {
  private readonly flaky: string[] = [];

  onTestCaseResult(testCase: TestCase): void {
    const diagnostic = testCase.diagnostic();
    if (diagnostic?.flaky) {
      // Vitest keeps the failed attempts' errors on a test that passes on a retry.
      const failure = firstFailure(testCase.result().errors);
      this.flaky.push(
        `${testCase.module.relativeModuleId} > ${testCase.fullName} (passed after ${diagnostic.retryCount} retr${diagnostic.retryCount === 1 ? 'y' : 'ies'})` +
          (failure ? `; first failure: ${failure}` : ''),
      );
    }
  }

  onTestRunEnd(): void {
    if (this.flaky.length === 0) return;
    process.stdout.write(`\n${this.flaky.length} flaky test(s), passed only on a retry:\n`);
    for (const line of this.flaky) process.stdout.write(`FLAKY ${line}\n`);
  }
}
