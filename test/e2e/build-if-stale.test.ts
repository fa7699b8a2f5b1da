import { execFile, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';

const execFileAsync = promisify(execFile);
const repoRoot = new URL('../../', import.meta.url).pathname;

afterAll(() => removeTempDirs());

// A stand-in for the compiler: logs each call, then writes dist/cli.js in two halves with a pause between,
// so a process that started on a half-written build would print only the first half.
const FAKE_TSC = `
const { appendFileSync, mkdirSync, readFileSync, writeFileSync } = require('node:fs');
appendFileSync('tsc-calls.log', 'call\\n');
if (readFileSync('src/cli.ts', 'utf8').includes('BROKEN')) { console.error('error TS1005'); process.exit(2); }
mkdirSync('dist', { recursive: true });
writeFileSync('dist/cli.js', 'first half\\n');
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
appendFileSync('dist/cli.js', 'second half\\n');
`;

/** A checkout with the real build scripts, one source file, one asset, and the real compiler or the stand-in. */
function makeCheckout(compiler: 'real' | 'fake'): string {
  const root = makeTempDir('hookrelay-build-');
  mkdirSync(join(root, 'scripts'));
  mkdirSync(join(root, 'src'));
  for (const script of ['build-if-stale.mjs', 'copy-assets.mjs']) {
    copyFileSync(join(repoRoot, 'scripts', script), join(root, 'scripts', script));
  }
  writeFileSync(
    join(root, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { target: 'es2022', module: 'nodenext', strict: true, skipLibCheck: true, types: [] } }),
  );
  writeFileSync(
    join(root, 'tsconfig.build.json'),
    JSON.stringify({ extends: './tsconfig.json', compilerOptions: { rootDir: 'src', outDir: 'dist' }, include: ['src'] }),
  );
  writeFileSync(join(root, 'package-lock.json'), '{"lockfileVersion":3}\n');
  writeFileSync(join(root, 'src', 'cli.ts'), 'export const greeting: string = "hello";\n');
  writeFileSync(join(root, 'src', 'page.html'), '<p>page</p>\n');
  if (compiler === 'real') {
    symlinkSync(join(repoRoot, 'node_modules'), join(root, 'node_modules'));
  } else {
    mkdirSync(join(root, 'node_modules', 'typescript', 'bin'), { recursive: true });
    writeFileSync(join(root, 'node_modules', 'typescript', 'bin', 'tsc'), FAKE_TSC);
  }
  return root;
}

function runBuild(root: string, ...args: string[]): { status: number | null; stderr: string } {
  const result = spawnSync(process.execPath, ['scripts/build-if-stale.mjs', ...args], { cwd: root, encoding: 'utf8' });
  return { status: result.status, stderr: result.stderr };
}

function compilerCalls(root: string): number {
  const log = join(root, 'tsc-calls.log');
  return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0;
}

describe('scripts/build-if-stale.mjs', () => {
  it('builds once, then leaves dist/ untouched until an input changes', () => {
    const root = makeCheckout('real');
    const first = runBuild(root);
    expect(first.status, first.stderr).toBe(0);
    expect(first.stderr).toContain('building dist/');
    const built = join(root, 'dist', 'cli.js');
    expect(readFileSync(built, 'utf8')).toContain('"hello"');
    expect(readFileSync(join(root, 'dist', 'page.html'), 'utf8')).toBe('<p>page</p>\n');
    const before = statSync(built);

    const restart = runBuild(root);
    expect(restart.status).toBe(0);
    expect(restart.stderr).toContain('dist/ is up to date');
    expect(restart.stderr).not.toContain('building');
    const after = statSync(built);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);

    // A copy or a checkout changes mtimes, not bytes: still up to date.
    utimesSync(join(root, 'src', 'cli.ts'), new Date(), new Date(Date.now() + 60_000));
    expect(runBuild(root).stderr).toContain('dist/ is up to date');

    writeFileSync(join(root, 'src', 'cli.ts'), 'export const greeting: string = "changed";\n');
    const changed = runBuild(root);
    expect(changed.stderr).toContain('sources changed since the last build');
    expect(readFileSync(built, 'utf8')).toContain('"changed"');

    writeFileSync(join(root, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'es2020', module: 'nodenext', types: [] } }));
    expect(runBuild(root).stderr).toContain('sources changed since the last build');
    expect(runBuild(root).stderr).toContain('dist/ is up to date');
    expect(runBuild(root, '--force').stderr).toContain('building dist/');
  }, 60_000);

  it('never takes a failed build for a fresh one, even when the sources go back to the last good state', () => {
    const root = makeCheckout('fake');
    expect(runBuild(root).status).toBe(0);
    const good = readFileSync(join(root, 'src', 'cli.ts'), 'utf8');
    writeFileSync(join(root, 'src', 'cli.ts'), 'BROKEN');
    const failed = runBuild(root);
    expect(failed.status).toBe(1);
    expect(failed.stderr).toContain('failed');
    writeFileSync(join(root, 'src', 'cli.ts'), good);
    const again = runBuild(root);
    expect(again.status).toBe(0);
    expect(again.stderr).toContain('building dist/');
    expect(compilerCalls(root)).toBe(3);
    expect(existsSync(join(root, '.build-lock'))).toBe(false);
  });

  it('builds once for three concurrent starts, and each starts on the complete build', async () => {
    const root = makeCheckout('fake');
    const starts = await Promise.all(
      [1, 2, 3].map(() => execFileAsync('sh', ['-c', `"${process.execPath}" scripts/build-if-stale.mjs && cat dist/cli.js`], { cwd: root })),
    );
    for (const start of starts) expect(start.stdout).toBe('first half\nsecond half\n');
    expect(compilerCalls(root)).toBe(1);
    expect(starts.filter((s) => s.stderr.includes('building dist/'))).toHaveLength(1);
    expect(starts.filter((s) => s.stderr.includes('dist/ is up to date'))).toHaveLength(2);
  });

  it('takes over the lock of a build whose process died', () => {
    const root = makeCheckout('fake');
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    mkdirSync(join(root, '.build-lock'));
    writeFileSync(join(root, '.build-lock', 'holder.json'), JSON.stringify({ pid: Number(dead.stdout), host: hostname() }));
    const result = runBuild(root);
    expect(result.status).toBe(0);
    expect(result.stderr).toContain('removing the lock of a build that did not finish');
    expect(compilerCalls(root)).toBe(1);
  });

  it('runs before npm start and npm test; npm run build always builds', () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
    expect(pkg.scripts.prestart).toBe('node scripts/build-if-stale.mjs');
    expect(pkg.scripts.pretest).toBe('node scripts/build-if-stale.mjs');
    expect(pkg.scripts.build).toBe('node scripts/build-if-stale.mjs --force');
  });
});
