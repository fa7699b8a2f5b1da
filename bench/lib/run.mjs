// Shared benchmark plumbing: start a server child process, read its peak RSS, run autocannon, print rows.
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { request } from 'undici';

const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));

/**
 * `hookrelay serve` as `npm start` runs it: the node options of the start script (e.g. the young-generation
 * cap), then the CLI, so every benchmark measures what operators run. BENCH_NODE_ARGS (e.g. "--cpu-prof")
 * adds options, for profiling.
 */
export function serveCommand(cli) {
  const words = packageJson.scripts.start.split(/\s+/);
  const startOptions = words.slice(1, words.indexOf('dist/cli.js'));
  const extra = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  return [...startOptions, ...extra, cli, 'serve'];
}

// A fixed admin token: otherwise every hookrelay server a benchmark starts prints a freshly generated one.
export const BENCH_ADMIN_TOKEN = 'bench-admin-token-0123456789';

/**
 * Spawns a server, resolves with its port (and `logPath`, its stdout, removed when it exits) once `readPort(line)`
 * finds it in stdout. Stdout goes to a file, not
 * a pipe: otherwise this process, which also generates the load, would spend its event loop reading every log
 * line the server writes, and that delay would count as the server's latency.
 */
export function startServer(command, args, { env = {}, readPort }) {
  const logDir = mkdtempSync(join(process.env.BENCH_LOG_DIR ?? tmpdir(), 'bench-log-'));
  const logPath = join(logDir, 'stdout.log');
  const logFd = openSync(logPath, 'w');
  const child = spawn(command, args, { env: { HOOKRELAY_ADMIN_TOKEN: BENCH_ADMIN_TOKEN, ...process.env, ...env }, stdio: ['ignore', logFd, 'inherit'] });
  closeSync(logFd);
  const findPort = () => {
    for (const line of readFileSync(logPath, 'utf8').split('\n')) {
      try {
        const port = readPort(line);
        if (port) return port;
      } catch {
        // a line still being written; it is read whole on the next poll
      }
    }
    return null;
  };
  return new Promise((resolve, reject) => {
    let found = false;
    const poll = setInterval(() => {
      const port = findPort();
      if (!port) return;
      found = true;
      clearInterval(poll);
      resolve({ child, port, logPath });
    }, 20);
    child.once('exit', (code) => {
      clearInterval(poll);
      // A short-lived child (the undici loop) may print its line and exit between two polls.
      const port = found ? null : findPort();
      rmSync(logDir, { recursive: true, force: true });
      if (port) resolve({ child, port, logPath });
      else if (!found) reject(new Error(`${args.join(' ')} exited with ${code} before listening`));
    });
  });
}

/** Resolves once `child` has exited (at once if it already has). */
export function whenExited(child) {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', resolve));
}

/**
 * `hookrelay serve` of a built checkout on a loopback ephemeral port, with a fresh data dir and no rules;
 * `stop()` ends it and removes the data dir.
 */
export async function startFreshServe(checkout, readPort) {
  const dataDir = mkdtempSync(join(tmpdir(), 'hookrelay-bench-'));
  const rulesDir = join(dataDir, 'rules');
  mkdirSync(rulesDir);
  const server = await startServer(process.execPath, serveCommand(join(checkout, 'dist/cli.js')), {
    env: { HOOKRELAY_PORT: '0', HOOKRELAY_HOST: '127.0.0.1', HOOKRELAY_DATA_DIR: dataDir, HOOKRELAY_RULES_DIR: rulesDir, HOOKRELAY_SECRET: 'bench-secret' },
    readPort,
  });
  const stop = async () => {
    await stopServer(server.child);
    rmSync(dataDir, { recursive: true, force: true });
  };
  return { ...server, stop };
}

/** Milliseconds one admin API GET takes (with the bench admin token); throws unless it answers 200. */
export async function timedAdminGet(url) {
  const started = performance.now();
  const res = await request(url, { headers: { authorization: `Bearer ${BENCH_ADMIN_TOKEN}` } });
  const body = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}: ${body.slice(0, 300)}`);
  return performance.now() - started;
}

export async function stopServer(child) {
  if (child.exitCode !== null || child.signalCode !== null) throw new Error(`server process had already exited (${child.exitCode ?? child.signalCode})`);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** Peak resident set size of a process, in MB (VmHWM: the high-water mark since it started). */
export function peakRssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

/**
 * CPU time a process (all its threads) has used so far, in ms, from /proc/PID/stat (user + system, in clock
 * ticks of 10 ms). CPU per request is far steadier than requests per second on a shared machine: when a
 * neighbour takes the cores, rps drops but the work each request costs stays the same.
 */
export function cpuMs(pid) {
  return statCpuMs(`/proc/${pid}/stat`);
}

/**
 * CPU time of a process's main thread (the event loop) so far, in ms: the rest of `cpuMs` is its other threads
 * (libuv's pool, V8's helpers, worker threads such as SQLite's checkpoint thread).
 */
export function mainThreadCpuMs(pid) {
  return statCpuMs(`/proc/${pid}/task/${pid}/stat`);
}

function statCpuMs(path) {
  const fields = readFileSync(path, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * CPU microseconds per unit of work (request, delivery) that process `pid` spent since `read(pid)` (default
 * `cpuMs`, or `mainThreadCpuMs`) gave `before`.
 */
export function cpuUsPer(pid, before, count, read = cpuMs) {
  return Math.round(((read(pid) - before) * 1000) / Math.max(1, count));
}

/**
 * What V8's collector reported in a server's stdout when it ran with `BENCH_NODE_ARGS=--trace-gc-nvp`: per
 * isolate (the main thread, each worker thread), the collections, bytes allocated and promoted, and pause
 * time, busiest first. Allocation per unit of work moves far less between runs than CPU time on a busy
 * machine, so it shows what a change to the hot path saves where CPU pairs cannot.
 */
export function gcByIsolate(logPath) {
  const isolates = new Map();
  for (const line of readFileSync(logPath, 'utf8').split('\n')) {
    const isolate = /^\[\d+:(0x[0-9a-f]+)\]/.exec(line)?.[1];
    if (!isolate || !line.includes(' allocated=')) continue;
    const field = (name) => Number(new RegExp(` ${name}=([0-9.]+)`).exec(line)?.[1] ?? 0);
    const gc = isolates.get(isolate) ?? { isolate, collections: 0, fullCollections: 0, allocatedBytes: 0, promotedBytes: 0, pauseMs: 0 };
    gc.collections += 1;
    if (!/ gc=s /.test(line)) gc.fullCollections += 1;
    gc.allocatedBytes += field('allocated');
    gc.promotedBytes += field('promoted');
    gc.pauseMs += field('pause');
    isolates.set(isolate, gc);
  }
  return [...isolates.values()].sort((a, b) => b.allocatedBytes - a.allocatedBytes);
}

/** `gcByIsolate`'s figures per unit of work, one isolate per line. */
export function formatGc(isolates, count, unit) {
  return isolates.map((gc) => `${gc.isolate}: ${(gc.allocatedBytes / count / 1024).toFixed(1)} KB allocated, ${Math.round(gc.promotedBytes / count)} B promoted, ${((gc.pauseMs * 1000) / count).toFixed(1)} µs of GC pauses per ${unit}; ${gc.collections} collections (${gc.fullCollections} full)`);
}

export function load(options) {
  return new Promise((resolve, reject) => {
    const instance = autocannon(options, (err, result) => (err ? reject(err) : resolve(result)));
    autocannon.track(instance, { renderProgressBar: false, renderResultsTable: false, renderLatencyTable: false });
  });
}

export function summarize(name, result, extra = {}) {
  const ok = result['2xx'];
  return {
    name,
    rps: Math.round(ok / (result.duration || 1)),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    ...extra,
  };
}

export function printTable(rows, columns) {
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c] ?? '').length)));
  const line = (cells) => cells.map((cell, i) => String(cell ?? '').padEnd(widths[i])).join('  ');
  console.log(line(columns));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const row of rows) console.log(line(columns.map((c) => row[c])));
}

export const formatRatio = (r) => `${r.toFixed(2)}x`;
export const ratio = (a, b) => (b ? formatRatio(a / b) : 'n/a');

export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/**
 * One row from the same case measured in several rounds: median rps and latencies, the rps range (so the
 * noise is visible next to the figure), the highest peak RSS, summed failures.
 */
export function combineRounds(name, results) {
  const rps = results.map((r) => r.rps);
  return {
    name,
    rps: Math.round(median(rps)),
    'rps range': `${Math.min(...rps)}–${Math.max(...rps)}`,
    p50: median(results.map((r) => r.p50)),
    p99: median(results.map((r) => r.p99)),
    'p99 range': `${Math.min(...results.map((r) => r.p99))}–${Math.max(...results.map((r) => r.p99))}`,
    rssMb: Math.max(...results.map((r) => r.rssMb ?? 0)),
    ...(results[0].cpuUs !== undefined && { cpuUs: Math.round(median(results.map((r) => r.cpuUs))) }),
    ...(results[0].cpuSettledUs !== undefined && { cpuSettledUs: Math.round(median(results.map((r) => r.cpuSettledUs))) }),
    ...(results[0].mainUs !== undefined && { mainUs: Math.round(median(results.map((r) => r.mainUs))) }),
    non2xx: results.reduce((sum, r) => sum + (r.non2xx ?? 0), 0),
    errors: results.reduce((sum, r) => sum + (r.errors ?? 0), 0),
  };
}

/** Rounds per benchmark (BENCH_ROUNDS, default 3). */
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

/**
 * Runs every case once per round, rounds back to back, and returns each case's results in round order. On a
 * shared machine identical runs differ a lot, so ratios are taken within a round (see medianRatio).
 */
export async function inRounds(cases) {
  const results = cases.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, run] of cases.entries()) results[i].push(await run());
  }
  return results;
}

/** Median over rounds of the per-round ratio a/b of `key`: each round's cases ran back to back, on the same machine state. */
export function medianRatio(aRounds, bRounds, key = 'rps') {
  return median(aRounds.map((a, i) => a[key] / bRounds[i][key]));
}
