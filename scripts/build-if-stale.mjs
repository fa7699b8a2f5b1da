// Builds dist/ (tsc, then the assets) only when its inputs changed since the last successful build, so a
// restart with unchanged sources starts at once.
//
//   node scripts/build-if-stale.mjs           build when stale (npm start and npm test run this first)
//   node scripts/build-if-stale.mjs --force   always build (npm run build)
//
// Freshness: a SHA-256 over every input file's path and bytes, written to dist/.build-manifest.json
// after a build succeeds and removed before one begins, so a failed or interrupted build is never taken
// for a fresh one. Content rather than mtimes, because a checkout or a copy changes mtimes, not bytes.
//
// Concurrency: several processes started from one checkout (cluster nodes, npm start with npm test)
// take a lock directory (mkdir is atomic) around the check and the build. The others wait, then find
// dist/ fresh and start on the complete build; none reads a half-written one.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const root = new URL('..', import.meta.url).pathname;
const distDir = join(root, 'dist');
const manifestPath = join(distDir, '.build-manifest.json');
const lockDir = join(root, '.build-lock');

/** What the output depends on: the sources, the compiler settings, the installed compiler, the asset copier, this file. */
const INPUT_FILES = ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json', 'scripts/copy-assets.mjs', 'scripts/build-if-stale.mjs'];
const INPUT_DIRS = ['src'];

/** A lock older than this whose holder cannot be checked (another host) is taken as abandoned. */
const FOREIGN_LOCK_STALE_MS = 10 * 60_000;
const LOCK_POLL_MS = 100;

function log(message) {
  process.stderr.write(`[build] ${message}\n`);
}

function listFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listFiles(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

function inputsHash() {
  const files = INPUT_FILES.map((f) => join(root, f)).filter((f) => existsSync(f));
  for (const dir of INPUT_DIRS) {
    const path = join(root, dir);
    if (existsSync(path)) files.push(...listFiles(path));
  }
  const hash = createHash('sha256');
  for (const file of files.map((f) => relative(root, f).split(sep).join('/')).sort()) {
    const bytes = readFileSync(join(root, file));
    hash.update(`${file}\0${bytes.length}\0`);
    hash.update(bytes);
  }
  return hash.digest('hex');
}

function recordedHash() {
  try {
    return JSON.parse(readFileSync(manifestPath, 'utf8')).inputs ?? null;
  } catch {
    return null;
  }
}

function holderIsGone() {
  let holder;
  try {
    holder = JSON.parse(readFileSync(join(lockDir, 'holder.json'), 'utf8'));
  } catch {
    // Created but not yet described: give its owner a moment, unless it has been like this for long.
    return ageMs() > 5_000;
  }
  if (holder.host !== hostname()) return ageMs() > FOREIGN_LOCK_STALE_MS;
  try {
    process.kill(holder.pid, 0);
    return false;
  } catch (error) {
    return error.code === 'ESRCH';
  }
}

function ageMs() {
  try {
    return Date.now() - statSync(lockDir).mtimeMs;
  } catch {
    return 0;
  }
}

async function acquireLock() {
  let announced = false;
  for (;;) {
    try {
      mkdirSync(lockDir);
      writeFileSync(join(lockDir, 'holder.json'), JSON.stringify({ pid: process.pid, host: hostname() }));
      return;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
    }
    if (holderIsGone()) {
      log('removing the lock of a build that did not finish');
      rmSync(lockDir, { recursive: true, force: true });
      continue;
    }
    if (!announced) {
      log('waiting for another build of this checkout to finish');
      announced = true;
    }
    await sleep(LOCK_POLL_MS);
  }
}

function releaseLock() {
  rmSync(lockDir, { recursive: true, force: true });
}

function run(args) {
  const result = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`${args.join(' ')} failed (${result.status ?? result.signal})`);
}

function build(inputs) {
  rmSync(manifestPath, { force: true });
  run([join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json']);
  run([join(root, 'scripts/copy-assets.mjs')]);
  writeFileSync(manifestPath, `${JSON.stringify({ inputs, builtAt: new Date().toISOString() })}\n`);
}

async function main() {
  const force = process.argv.includes('--force');
  await acquireLock();
  const onSignal = () => {
    releaseLock();
    process.exit(130);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const inputs = inputsHash();
    if (!force && recordedHash() === inputs) {
      log('dist/ is up to date');
      return;
    }
    const started = Date.now();
    log(force ? 'building dist/' : 'sources changed since the last build: building dist/');
    build(inputs);
    log(`built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    releaseLock();
  }
}

main().catch((error) => {
  log(error.message);
  process.exit(1);
});
