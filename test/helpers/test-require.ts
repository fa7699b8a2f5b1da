/** What a test may need from the machine that it cannot start itself. */
export type TestRequirement = 'postgres' | 'chromium';

/**
 * HOOKRELAY_TEST_REQUIRE lists, comma-separated, what the machine must provide (CI sets
 * `postgres,chromium`). Tests that need a listed thing fail where it is missing instead of skipping.
 */
export function testRequires(what: TestRequirement, env: Record<string, string | undefined> = process.env): boolean {
  return (env.HOOKRELAY_TEST_REQUIRE ?? '')
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .includes(what);
}
