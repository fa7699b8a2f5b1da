// npm run bench:delivery — the delivery loop against a plain undici loop, and ingest cost of rule count.
// 1) A local counting sink (node:http, 200). Baseline: a plain undici loop posting the same number of
//    bodies at the same concurrency. hookrelay: an outbox pre-filled with DELIVERIES rows (10 rules with
//    mixed filters, one transform) drained by `hookrelay serve`; deliveries/s from start to last arrival.
// 2) Ingest rps with 1, 100 and 1,000 rules loaded (one in ten with a `$regex`; autocannon, 50
//    connections), ratio to 1 rule.
// 3) Fixed rate: ingest at BENCH_DELIVERY_RATE events/s (open loop) with one rule forwarding to a sink that
//    answers after 0 and 100 ms; ingest→arrival p50/p99 and the backlog when the load ends, with the
//    default (adaptive) limit and with the old fixed limit of 10.
// 4) A busy destination (BENCH_ONLY=busy): a backlog behind a rate limit or a concurrency limit, the
//    server's CPU while the destination takes it at its pace; BENCH_BASE_CLI runs another build alternating.
import { createHmac, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUSY_CASES, busyDestination } from './lib/busy-destination.mjs';
import { baselineLoop, hookrelayDrain, readServePort } from './lib/drain.mjs';
import { fixedRateDelivery } from './lib/fixed-rate-delivery.mjs';
import { ROUNDS, combineRounds, formatGc, inRounds, load, median, medianRatio, printTable, formatRatio, serveCommand, startServer, stopServer, summarize } from './lib/run.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = (p) => join(root, 'dist', p);
const { sampleTransferSucceeded } = await import(dist('samples/transfer-succeeded.js'));

const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 50_000);
const CONCURRENCY = 64;
const INGEST_DURATION = Number(process.env.BENCH_DURATION ?? 8);
const SECRET = 'bench-secret';
// BENCH_CLI: another build's dist/cli.js, to compare two versions under the same harness.
const cli = process.env.BENCH_CLI ?? dist('cli.js');
const readJsonPort = (line) => line.startsWith('{') && JSON.parse(line).port;

/** N rules: one matches every event (forwarding nowhere, the worker is off), the rest filter on checkout ids that never occur. */
function ingestRules(count) {
  const rules = ['id: all\non: [transfer:succeeded]\nto:\n  url: http://127.0.0.1:9/none\n'];
  for (let i = 1; i < count; i++) {
    // Every tenth rule filters with a regular expression, as rule authors do for e-mail domains.
    const where = i % 10 === 0
      ? `  result.email: { $regex: "@shop-${i}\\\\.example$", $options: i }\n`
      : `  result.checkoutId: "${randomUUID()}"\n  result.totalPriceUsd: { $gte: ${i % 50} }\n`;
    rules.push(`id: r${i}\non: [transfer:succeeded]\nwhere:\n${where}to:\n  url: http://127.0.0.1:9/r${i}\n`);
  }
  return rules;
}

async function ingestWithRules(count) {
  const dataDir = mkdtempSync(join(tmpdir(), 'hookrelay-bench-'));
  const rulesDir = join(dataDir, 'rules');
  mkdirSync(rulesDir);
  writeFileSync(join(rulesDir, 'rules.yaml'), ingestRules(count).join('---\n'));
  const config = join(dataDir, 'hookrelay.yaml');
  writeFileSync(config, 'delivery:\n  enabled: false\n');
  const server = await startServer(process.execPath, serveCommand(cli), {
    env: { HOOKRELAY_PORT: '0', HOOKRELAY_HOST: '127.0.0.1', HOOKRELAY_DATA_DIR: dataDir, HOOKRELAY_RULES_DIR: rulesDir, HOOKRELAY_SECRET: SECRET, HOOKRELAY_CONFIG: config },
    readPort: readServePort,
  });
  const template = JSON.stringify(sampleTransferSucceeded());
  const id = JSON.parse(template).result.id;
  const requests = [{
    method: 'POST',
    path: '/webhooks/checkout',
    setupRequest(req) {
      const body = template.replace(id, randomUUID());
      req.body = body;
      req.headers = { 'content-type': 'application/json', 'x-service-signature': createHmac('sha256', SECRET).update(body).digest('hex') };
      return req;
    },
  }];
  try {
    await load({ url: `http://127.0.0.1:${server.port}`, connections: 50, duration: 2, requests });
    const result = await load({ url: `http://127.0.0.1:${server.port}`, connections: 50, duration: INGEST_DURATION, requests });
    return summarize(`ingest with ${count} rule(s)`, result);
  } finally {
    await stopServer(server.child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// Rounds, as in bench:ingest: each ratio is taken within a round and the median of the rounds reported.
console.log(`bench:delivery — node ${process.version}, ${ROUNDS} round(s)\n`);

async function ingestRounds() {
  const counts = [1, 100, 1000];
  const rounds = await inRounds(counts.map((count) => () => ingestWithRules(count)));
  return counts.map((count, i) => {
    const vsOneRule = medianRatio(rounds[i], rounds[0]);
    return { ...combineRounds(`ingest with ${count} rule(s)`, rounds[i]), 'vs 1 rule': formatRatio(vsOneRule), vsOneRule };
  });
}

const FIXED_RATE = Number(process.env.BENCH_DELIVERY_RATE ?? 1000);
const FIXED_SECONDS = Number(process.env.BENCH_FIXED_SECONDS ?? 10);
const SINK_DELAYS = (process.env.BENCH_SINK_DELAYS ?? '0,100').split(',').map(Number);
const FIXED_TARGET_MS = 250;

async function fixedRateCases() {
  const rows = [];
  for (const sinkDelayMs of SINK_DELAYS) {
    for (const pinnedConcurrency of [undefined, 10]) rows.push(await fixedRateDelivery({ rate: FIXED_RATE, seconds: FIXED_SECONDS, sinkDelayMs, pinnedConcurrency }));
  }
  printTable(rows, ['name', 'ingested', 'arrived', 'p50', 'p99', 'max', 'backlogAtEnd', 'limitRange', 'ingestP99']);
  console.log('p50/p99/max: ms from when each ingest request was due to its arrival at the sink; backlogAtEnd: ingested, not yet arrived, when the load ended; limitRange: the destination\'s limit, sampled every 250 ms.');
  const target = rows.find((row) => row.name === `1000/s, sink 100 ms, adaptive (default)`);
  if (target) console.log(`target: 1,000/s to a 100 ms sink, p99 < ${FIXED_TARGET_MS} ms: ${target.p99 < FIXED_TARGET_MS && target.arrived === target.ingested ? 'met' : 'NOT met'} (${target.p99} ms)`);
}

async function busyCases() {
  const base = process.env.BENCH_BASE_CLI;
  const rows = [];
  for (const busyCase of BUSY_CASES) {
    const runs = { test: [], base: [] };
    for (let round = 0; round < ROUNDS; round++) {
      // Alternating, and each round in the other order.
      const order = base ? (round % 2 ? ['base', 'test'] : ['test', 'base']) : ['test'];
      for (const which of order) runs[which].push(await busyDestination(busyCase, { serveCli: which === 'base' ? base : cli }));
    }
    const row = (which, label) => {
      const r = runs[which];
      return { name: `${busyCase.name} (${label})`, deliveredPerSec: median(r.map((x) => x.deliveredPerSec)), cpuShare: r.map((x) => x.cpuShare).join(', '), cpuPerDeliveryUs: median(r.map((x) => x.cpuPerDeliveryUs)) };
    };
    rows.push(row('test', 'this build'));
    if (base) {
      const ratio = (key) => formatRatio(median(runs.test.map((t, i) => t[key] / runs.base[i][key])));
      rows.push({ ...row('base', 'BENCH_BASE_CLI'), 'rate vs base': ratio('deliveredPerSec'), 'cpu per delivery vs base': ratio('cpuPerDeliveryUs') });
    }
  }
  printTable(rows, ['name', 'deliveredPerSec', 'cpuShare', 'cpuPerDeliveryUs', 'rate vs base', 'cpu per delivery vs base']);
  console.log('10 s after 2 s of warm-up per round; cpuShare: the server\'s CPU (all threads) as a share of one core, per round; ratios: medians of the per-round ratios (this build / base).');
}

if (process.env.BENCH_ONLY === 'busy') {
  await busyCases();
  process.exit(0);
}

if (process.env.BENCH_ONLY === 'fixed-rate') {
  await fixedRateCases();
  process.exit(0);
}

if (process.env.BENCH_ONLY === 'rules') {
  printTable(await ingestRounds(), ['name', 'rps', 'rps range', 'p50', 'p99', 'non2xx', 'errors', 'vs 1 rule']);
  process.exit(0);
}
const sink = await startServer(process.execPath, [join(root, 'bench/lib/counting-sink.mjs')], { readPort: readJsonPort });
let drains, loops;
try {
  [drains, loops] = await inRounds([
    () => hookrelayDrain({ sinkPort: sink.port, rows: DELIVERIES, concurrency: CONCURRENCY, serveCli: cli }),
    () => baselineLoop(sink.port, DELIVERIES, 700, CONCURRENCY),
  ]);
} finally {
  await stopServer(sink.child);
}
const deliveryRatio = medianRatio(drains, loops, 'deliveriesPerSec');
const deliveryRow = (runs, ratioText, cpuRatioText) => {
  const rates = runs.map((r) => r.deliveriesPerSec);
  return { name: runs[0].name, deliveriesPerSec: Math.round(median(rates)), range: `${Math.min(...rates)}–${Math.max(...rates)}`, cpuUs: Math.round(median(runs.map((r) => r.cpuUs))), 'vs undici loop': ratioText, 'cpu vs undici loop': cpuRatioText };
};
const cpuRatio = medianRatio(drains, loops, 'cpuUs');
printTable([deliveryRow(loops, formatRatio(1), formatRatio(1)), deliveryRow(drains, formatRatio(deliveryRatio), formatRatio(cpuRatio))], ['name', 'deliveriesPerSec', 'range', 'cpuUs', 'vs undici loop', 'cpu vs undici loop']);
console.log('cpuUs = CPU time per delivery of the sending process (the loop, or hookrelay serve with all its threads).');
for (const [round, drain] of drains.entries()) {
  for (const line of formatGc(drain.gc, DELIVERIES, 'delivery')) console.log(`round ${round + 1} ${line}`);
}
if (process.env.BENCH_ONLY === 'drain') process.exit(0);
console.log('');
await busyCases();
console.log('');
const ingestRows = await ingestRounds();
printTable(ingestRows, ['name', 'rps', 'rps range', 'p50', 'p99', 'non2xx', 'errors', 'vs 1 rule']);
const rulesRatio = ingestRows[2].vsOneRule;
console.log(`\nmedians over rounds; ratios = median of the per-round ratios.`);
console.log(`targets: delivery >= 0.5x undici loop: ${deliveryRatio >= 0.5 ? 'met' : 'NOT met'} (${formatRatio(deliveryRatio)}); ingest with 1,000 rules >= 0.5x 1 rule: ${rulesRatio >= 0.5 ? 'met' : 'NOT met'} (${formatRatio(rulesRatio)})`);
console.log('');
await fixedRateCases();
