import type { Reporter, TestModule } from 'vitest/node';

/** A suite skipped for want of something on the machine says why at the end of its title. */
const SKIP_REASON = /\(skipped: (.+)\)$/;

/** One line per reason suites were skipped for, with how many test files it left unrun. */
export function skipSummary(skipped: readonly { file: string; suite: string }[]): string[] {
  const filesByReason = new Map<string, Set<string>>();
  for (const { file, suite } of skipped) {
    const reason = SKIP_REASON.exec(suite)?.[1];
    if (reason !== undefined) filesByReason.set(reason, (filesByReason.get(reason) ?? new Set()).add(file));
  }
  return [...filesByReason].map(([reason, files]) => `SKIPPED ${files.size} test file(s): ${reason}`);
}

/**
 * Says after vitest's own summary which tests did not run for want of a browser or a PostgreSQL server,
 * and why: "N skipped" alone reads like a pass.
 */
export default class SkipReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const skipped = testModules.flatMap((module) =>
      [...module.children.allSuites()].filter((suite) => suite.state() === 'skipped').map((suite) => ({ file: module.relativeModuleId, suite: suite.name })),
    );
    const lines = skipSummary(skipped);
    if (lines.length === 0) return;
    process.stdout.write(`\nNot run on this machine:\n${lines.map((line) => `${line}\n`).join('')}`);
  }
}
