// npm run bench:memory — what hookrelay's code costs in memory before it does any work.
// 1) Idle: `hookrelay serve` (no rules, fresh data dir) 3 s after it listens, then after one request to the
//    admin API and the console (which load their code on first use). RSS is the process's resident set;
//    its file-backed part (the node binary's pages) depends on the machine's page cache, so the anonymous
//    part (RssAnon: heap, code, buffers of this process only) is printed beside it. With BENCH_BASE set to
//    another checkout (built), both run in alternating rounds and the ratios are printed.
// 2) Per module: a fresh node process imports the serve path's modules one after another, in the order
//    `hookrelay serve` needs them, and prints what each adds to RSS and to the V8 heap (after a full GC).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { readServePort } from './lib/drain.mjs';
import { BENCH_ADMIN_TOKEN, formatRatio, median, printTable, startFreshServe } from './lib/run.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const IDLE_MS = 3000;

const status = (pid) => {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(text)?.[1] ?? 0);
  return { rss: Math.round(kb('VmRSS') / 102.4) / 10, anon: Math.round(kb('RssAnon') / 102.4) / 10 };
};

async function idle(checkout) {
  const server = await startFreshServe(checkout, readServePort);
  try {
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    const atStart = status(server.child.pid);
    for (const path of ['/admin/api/events', '/admin/api/openapi.json', '/console/login']) {
      await (await request(`http://127.0.0.1:${server.port}${path}`, { headers: { authorization: `Bearer ${BENCH_ADMIN_TOKEN}` } })).body.dump();
    }
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    const afterAdmin = status(server.child.pid);
    return { rss: atStart.rss, anon: atStart.anon, adminRss: afterAdmin.rss, adminAnon: afterAdmin.anon };
  } finally {
    await server.stop();
  }
}

const checkouts = [['this checkout', root], ...(process.env.BENCH_BASE ? [['BENCH_BASE', process.env.BENCH_BASE]] : [])];
const results = checkouts.map(() => []);
for (let round = 0; round < ROUNDS; round++) {
  // Alternating, and each round in the other order: the second of a pair tends to win.
  const order = round % 2 === 0 ? checkouts.map((_, i) => i) : checkouts.map((_, i) => i).reverse();
  for (const i of order) results[i].push(await idle(checkouts[i][1]));
}
const medianOf = (rounds, key) => Math.round(median(rounds.map((r) => r[key])) * 10) / 10;
const rows = checkouts.map(([name], i) => ({
  checkout: name,
  'idle RSS MB': medianOf(results[i], 'rss'),
  'idle RssAnon MB': medianOf(results[i], 'anon'),
  'after admin RSS MB': medianOf(results[i], 'adminRss'),
  'after admin RssAnon MB': medianOf(results[i], 'adminAnon'),
  ...(i > 0 && { 'RssAnon, this / base': formatRatio(median(results[0].map((r, k) => r.anon / results[i][k].anon))) }),
}));
console.log(`idle memory of hookrelay serve, median of ${ROUNDS} alternating rounds:`);
printTable(rows, Object.keys(rows.at(-1)));

// What each module adds, in the order serve loads them (a module's cost excludes what earlier ones loaded).
const SERVE_PATH = [
  'config.js', 'log.js', 'store/sqlite/sqlite-store.js', 'rules/watcher.js',
  'ingest/ingest-handler.js', 'metrics/hookrelay-metrics.js', 'retention/retention-pruner.js', 'operations/jobs/job-runner.js', 'http/server.js',
  'hookrelay.js', 'cli/serve-program.js',
  // Loaded on first use only (the delivery side in the receiver: with `delivery.thread: false`, or for an alert or a resend):
  'delivery/delivery-side.js', 'admin/api/admin-api.js', 'admin/console/console-router.js', 'store/postgres/postgres-store.js', 'cli/program.js',
];
const script = `
const mb = () => { globalThis.gc(); const m = process.memoryUsage(); return [m.rss / 1048576, m.heapUsed / 1048576]; };
const rows = [];
let [rss, heap] = mb();
rows.push({ module: '(node itself)', rssMb: rss.toFixed(1), heapMb: heap.toFixed(1) });
for (const file of process.argv.slice(1)) {
  await import(file);
  const [r, h] = mb();
  rows.push({ module: file.split('/dist/')[1], rssMb: '+' + (r - rss).toFixed(1), heapMb: '+' + (h - heap).toFixed(1) });
  rss = r; heap = h;
}
console.log(JSON.stringify(rows));`;
const costs = JSON.parse(execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script, ...SERVE_PATH.map((f) => join(root, 'dist', f))], { encoding: 'utf8' }));
console.log('\nwhat each module adds (this checkout; from delivery-side.js on, loaded only on first use):');
printTable(costs, ['module', 'rssMb', 'heapMb']);
