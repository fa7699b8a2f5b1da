import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from '../../helpers/temp-dir.js';

/**
 * Real file-system faults need mount(8) and the right to use it (root or CAP_SYS_ADMIN, as in CI
 * containers started with it). Each helper returns null when that is not available, and the suite falls
 * back to an injected fault of the same SQLite error class (RELIABILITY_NO_MOUNT=1 forces the fallback).
 */
function tryMount(args: string[]): boolean {
  // RELIABILITY_NO_MOUNT=1 takes the fallback path even where mounting works.
  if (process.env.RELIABILITY_NO_MOUNT === '1') return false;
  try {
    execFileSync('mount', args, { stdio: 'ignore', timeout: 5000 });
    return true;
  } catch {
    return false;
  }
}

export function unmount(dir: string): void {
  try {
    execFileSync('umount', ['-l', dir], { stdio: 'ignore', timeout: 5000 });
  } catch {
    // already gone
  }
}

/** A size-limited tmpfs (a small disk that fills up), or null. */
export function mountSmallTmpfs(sizeBytes: number): string | null {
  if (process.platform !== 'linux') return null;
  const dir = makeTempDir('hookrelay-tmpfs-');
  return tryMount(['-t', 'tmpfs', '-o', `size=${sizeBytes}`, 'tmpfs', dir]) ? dir : null;
}

/** A read-only view of `source` (bind mount remounted ro: even root cannot write through it), or null. */
export function mountReadOnlyView(source: string): string | null {
  if (process.platform !== 'linux') return null;
  const dir = join(makeTempDir('hookrelay-ro-'), 'view');
  mkdirSync(dir);
  if (!tryMount(['--bind', source, dir])) return null;
  if (!tryMount(['-o', 'remount,ro,bind', dir])) {
    unmount(dir);
    return null;
  }
  return dir;
}
