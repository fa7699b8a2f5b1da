// Runs a start command (`npm start`, or `node dist/cli.js serve`) in this checkout on an ephemeral port
// with a fresh data dir, waits until it logs that it listens, stops it with SIGTERM and exits: a whole
// process to time from outside, e.g. with /usr/bin/time or hyperfine.
//
//   node bench/start.mjs npm start
//   node bench/start.mjs node --max-semi-space-size=4 --initial-old-space-size=40 dist/cli.js serve
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error('usage: node bench/start.mjs COMMAND [ARG ...]');
  process.exit(2);
}
const root = new URL('..', import.meta.url).pathname;
const dataDir = mkdtempSync(join(tmpdir(), 'hookrelay-start-'));
const child = spawn(command, args, {
  cwd: root,
  detached: true, // its own process group, so npm's child stops with it
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, HOOKRELAY_HOST: '127.0.0.1', HOOKRELAY_PORT: '0', HOOKRELAY_ADMIN_PORT: '0', HOOKRELAY_DATA_DIR: dataDir },
});
const started = Date.now();
let out = '';
child.stdout.on('data', (chunk) => {
  out += chunk;
  if (out.includes('"msg":"hookrelay listening"')) {
    process.stderr.write(`listening after ${Date.now() - started} ms\n`);
    out = '';
    process.kill(-child.pid, 'SIGTERM');
  }
});
child.on('exit', (code, signal) => {
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(signal || code === 0 ? 0 : 1);
});
