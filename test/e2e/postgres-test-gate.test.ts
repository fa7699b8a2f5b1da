import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const VITEST = fileURLToPath(new URL('../../node_modules/vitest/vitest.mjs', import.meta.url));
/** A loopback port where nothing listens. */
const NOWHERE = 'postgres://postgres@127.0.0.1:1/test';

function runVitest(file: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [VITEST, 'run', file, '--reporter=verbose'], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env } });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

describe('PostgreSQL tests without a PostgreSQL server', () => {
  it('are skipped and say why, or fail when HOOKRELAY_TEST_REQUIRE names postgres', async () => {
    const [skipped, required] = await Promise.all([
      runVitest('test/contract/postgres.test.ts', { HOOKRELAY_TEST_DATABASE_URL: NOWHERE }),
      runVitest('test/contract/postgres.test.ts', { HOOKRELAY_TEST_DATABASE_URL: NOWHERE, HOOKRELAY_TEST_REQUIRE: 'postgres' }),
    ]);
    expect(skipped.code, skipped.output).toBe(0);
    expect(skipped.output).toContain('Store contract: PostgreSQL (skipped: no PostgreSQL at 127.0.0.1:1)');
    expect(skipped.output).toContain('PostgreSQL tests skipped: no PostgreSQL at 127.0.0.1:1');
    expect(required.code).toBe(1);
    expect(required.output).toContain('no PostgreSQL at 127.0.0.1:1 (HOOKRELAY_TEST_DATABASE_URL), and HOOKRELAY_TEST_REQUIRE names postgres');
  }, 60_000);
});
