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
import { request } from 'undici';
import { load, printTable, ratio, startServer, stopServer, summarize } from './lib/run.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = (p) => join(root, 'dist', p);
const { SqliteStore } = await import(dist('store/sqlite/sqlite-store.js'));
const { loadRuleSet } = await import(dist('rules/loader.js'));
const { deliveriesForEvent } = await import(dist('ingest/deliveries-for-event.js'));
const { sampleTransferSucceeded } = await import(dist('samples/transfer-succeeded.js'));

const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 50_000);
const CONCURRENCY = 64;
const INGEST_DURATION = Number(process.env.BENCH_DURATION ?? 8);
const SECRET = 'bench-secret';
const cli = dist('cli.js');
const readJsonPort = (line) => line.startsWith('{') && JSON.parse(line).port;
const readServePort = (line) => line.includes('"hookrelay listening"') && Number(new URL(JSON.parse(line).url).port);

/** Ten rules on one sink: filters of several kinds (some match everything, some half, some nothing), one transform. */
function deliveryRules(sinkUrl) {
  const rules = [];
  for (let i = 0; i < 10; i++) {
    const where = [
      '',
      'where:\n  result.paymentMethod: BUY_WITH_CARD\n',
      'where:\n  result.quantity: { $gte: 1 }\n',
      'where:\n  result.email: { $regex: "@example\\\\.com$" }\n',
      'where:\n  result.totalPriceUsd: { $gte: 0 }\n',
    ][i % 5];
    const transform = i === 0 ? 'transform: |\n  { "email": result.email, "tokens": result.claimedTokens.tokenIds, "total": result.totalPriceUsd }\n' : '';
    rules.push(`id: rule-${i}\non: [transfer:succeeded]\n${where}${transform}to:\n  url: ${sinkUrl}/r${i}\nconcurrency: ${CONCURRENCY}\nretry: { schedule: [0s, 1s, 5s] }\n`);
  }
  return rules;
}

async function sinkCount(port) {
  const res = await request(`http://127.0.0.1:${port}/count`);
  return res.body.json();
}

async function resetSink(port) {
  await (await request(`http://127.0.0.1:${port}/reset`)).body.dump();
}

async function baselineLoop(sinkPort, total, bodyBytes) {
  const child = await startServer(process.execPath, [join(root, 'bench/lib/undici-loop.mjs'), `http://127.0.0.1:${sinkPort}/baseline`, String(total), String(CONCURRENCY), String(bodyBytes)], {
    readPort: (line) => line.startsWith('{') && (JSON.parse(line).ms || 0.001),
  });
  const ms = child.port; // readPort returned the elapsed ms
  await new Promise((resolve) => child.child.once('exit', resolve));
  return { name: `undici loop, ${total} POSTs, ${CONCURRENCY} in flight`, deliveriesPerSec: Math.round(total / (ms / 1000)), seconds: (ms / 1000).toFixed(1) };
}

async function hookrelayDrain(sinkPort) {
  const dataDir = mkdtempSync(join(tmpdir(), 'hookrelay-bench-'));
  const rulesDir = join(dataDir, 'rules');
  mkdirSync(rulesDir);
  deliveryRules(`http://127.0.0.1:${sinkPort}`).forEach((text, i) => writeFileSync(join(rulesDir, `r${i}.yaml`), text));
  const loaded = await loadRuleSet(rulesDir, {});
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
  // Fill the outbox exactly as ingest would (same planning, same transaction shape), without HTTP.
  const store = new SqliteStore({ dataDir, durability: 'normal' });
  let rows = 0;
  while (rows < DELIVERIES) {
    const batch = [];
    for (let i = 0; i < 200 && rows < DELIVERIES; i++) {
      const body = sampleTransferSucceeded({ paymentMethod: i % 2 ? 'BUY_WITH_CARD' : 'BUY_WITH_CRYPTO' });
      const raw = Buffer.from(JSON.stringify(body));
      const deliveries = (await deliveriesForEvent(loaded.ruleSet, { source: 'checkout', event: body.event, body, raw })).slice(0, DELIVERIES - rows);
      rows += deliveries.length;
      batch.push(store.saveEvent({ source: 'checkout', event: body.event, resultId: body.result.id, checkoutId: null, email: null, walletAddress: null, validation: 'valid', receivedAt: Date.now(), headers: {}, body: raw, deliveries }));
    }
    await Promise.all(batch);
  }
  await store.close();
  const config = join(dataDir, 'hookrelay.yaml');
  writeFileSync(config, `delivery:\n  allowNetworks: [127.0.0.1/32]\n  maxInFlight: ${CONCURRENCY}\n  batchSize: ${CONCURRENCY}\n`);
  await resetSink(sinkPort);
  const started = performance.now();
  // BENCH_NODE_ARGS (e.g. "--cpu-prof") profiles the draining server.
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const server = await startServer(process.execPath, [...nodeArgs, cli, 'serve'], {
    env: { HOOKRELAY_PORT: '0', HOOKRELAY_HOST: '127.0.0.1', HOOKRELAY_DATA_DIR: dataDir, HOOKRELAY_RULES_DIR: rulesDir, HOOKRELAY_SECRET: SECRET, HOOKRELAY_CONFIG: config },
    readPort: readServePort,
  });
  let sink = { count: 0 };
  while (sink.count < rows) {
    await new Promise((r) => setTimeout(r, 100));
    sink = await sinkCount(sinkPort);
    if (performance.now() - started > 600_000) throw new Error(`only ${sink.count} of ${rows} delivered in 10 minutes`);
  }
  // From the first arrival to the last, like the baseline: process start and rule loading are not delivery.
  const ms = sink.last - sink.first;
  await stopServer(server.child);
  rmSync(dataDir, { recursive: true, force: true });
  return { name: `hookrelay worker, ${rows} outbox rows, 10 rules`, deliveriesPerSec: Math.round(rows / (ms / 1000)), seconds: (ms / 1000).toFixed(1) };
}

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
  const drained = await hookrelayDrain(sink.port);
  const base = await baselineLoop(sink.port, DELIVERIES, 700);
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
