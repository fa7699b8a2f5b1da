// npm run bench:delivery — the delivery worker against a plain undici loop, and ingest cost of rule count.
// 1) A local counting sink (node:http, 200). Baseline: a plain undici loop posting the same number of
//    bodies at the same concurrency. hookrelay: an outbox pre-filled with DELIVERIES rows (10 rules with
//    mixed filters, one transform) drained by `hookrelay serve`; deliveries/s from start to last arrival.
// 2) Ingest rps with 1, 100 and 1,000 rules loaded (autocannon, 50 connections), ratio to 1 rule.
import { createHmac, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { baselineLoop, hookrelayDrain, readServePort } from './lib/drain.mjs';
import { load, printTable, ratio, startServer, stopServer, summarize } from './lib/run.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = (p) => join(root, 'dist', p);
const { sampleTransferSucceeded } = await import(dist('samples/transfer-succeeded.js'));

const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 50_000);
const CONCURRENCY = 64;
const INGEST_DURATION = Number(process.env.BENCH_DURATION ?? 8);
const SECRET = 'bench-secret';
const cli = dist('cli.js');
const readJsonPort = (line) => line.startsWith('{') && JSON.parse(line).port;

/** N rules: one matches every event (forwarding nowhere, the worker is off), the rest filter on checkout ids that never occur. */
function ingestRules(count) {
  const rules = ['id: all\non: [transfer:succeeded]\nto:\n  url: http://127.0.0.1:9/none\n'];
  for (let i = 1; i < count; i++) {
    rules.push(`id: r${i}\non: [transfer:succeeded]\nwhere:\n  result.checkoutId: "${randomUUID()}"\n  result.totalPriceUsd: { $gte: ${i % 50} }\nto:\n  url: http://127.0.0.1:9/r${i}\n`);
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
  // BENCH_NODE_ARGS (e.g. "--cpu-prof") profiles the draining server.
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const server = await startServer(process.execPath, [...nodeArgs, cli, 'serve'], {
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

console.log(`bench:delivery — node ${process.version}\n`);
if (process.env.BENCH_ONLY === 'rules') {
  const rows = [];
  for (const count of [1, 100, 1000]) rows.push(await ingestWithRules(count));
  for (const row of rows) row['vs 1 rule'] = ratio(row.rps, rows[0].rps);
  printTable(rows, ['name', 'rps', 'p50', 'p99', 'non2xx', 'errors', 'vs 1 rule']);
  process.exit(0);
}
const sink = await startServer(process.execPath, [join(root, 'bench/lib/counting-sink.mjs')], { readPort: readJsonPort });
let deliveryRows;
try {
  const drained = await hookrelayDrain({ sinkPort: sink.port, rows: DELIVERIES, concurrency: CONCURRENCY });
  const base = await baselineLoop(sink.port, DELIVERIES, 700, CONCURRENCY);
  deliveryRows = [base, drained].map((row) => ({ ...row, 'vs undici loop': ratio(row.deliveriesPerSec, base.deliveriesPerSec) }));
} finally {
  await stopServer(sink.child);
}
printTable(deliveryRows, ['name', 'deliveriesPerSec', 'seconds', 'vs undici loop']);
console.log('');
const ingestRows = [];
for (const count of [1, 100, 1000]) ingestRows.push(await ingestWithRules(count));
for (const row of ingestRows) row['vs 1 rule'] = ratio(row.rps, ingestRows[0].rps);
printTable(ingestRows, ['name', 'rps', 'p50', 'p99', 'non2xx', 'errors', 'vs 1 rule']);
const deliveryRatio = deliveryRows[1].deliveriesPerSec / deliveryRows[0].deliveriesPerSec;
const rulesRatio = ingestRows[2].rps / ingestRows[0].rps;
console.log(`\ntargets: delivery >= 0.5x undici loop: ${deliveryRatio >= 0.5 ? 'met' : 'NOT met'} (${deliveryRatio.toFixed(2)}x); ingest with 1,000 rules >= 0.5x 1 rule: ${rulesRatio >= 0.5 ? 'met' : 'NOT met'} (${rulesRatio.toFixed(2)}x)`);
