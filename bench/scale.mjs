// npm run bench:scale — SQLite against PostgreSQL with one and two nodes, in one run on one machine.
// 1) Ingest at the maximum rate (autocannon, 50 connections, signed ~730-byte bodies, no rules): SQLite
//    (durability full, one node), PostgreSQL one node, PostgreSQL two nodes (25 connections to each).
//    Rate, CPU per event of the nodes and of the database's backends, and the database's work per event.
// 2) Delivery: an outbox of BENCH_SCALE_DELIVERIES rows on PostgreSQL, filled beforehand, drained by one
//    and by two nodes into a loopback sink (its own process); deliveries/s from first to last arrival.
// 3) Ingest at half of each case's median maximum rate, open loop: the acknowledgement's p50/p99.
// Every case is a fresh process (and a fresh database) per round; rounds alternate the cases; medians.
// All traffic stays on 127.0.0.1 (PostgreSQL: HOOKRELAY_BENCH_DATABASE_URL, default the test server).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { readServePort, resetSink, sinkCount } from './lib/drain.mjs';
import { fixedRateLoad } from './lib/fixed-rate.mjs';
import { backgroundWalRate, BENCH_DATABASE_URL, createBenchDatabase, databaseSnapshot, databaseWork } from './lib/postgres-stats.mjs';
import { SECRET, rawSignedRequests, signedRequest } from './lib/signed-requests.mjs';
import { ROUNDS, cpuMs, formatRatio, inRounds, load, median, medianRatio, printTable, serveCommand, startServer, stopServer } from './lib/run.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = (p) => join(root, 'dist', p);
const { PostgresStore } = await import(dist('store/postgres/postgres-store.js'));
const { loadRuleSet } = await import(dist('rules/loader.js'));
const { planDeliveries } = await import(dist('rules/plan.js'));
const { sampleTransferSucceeded } = await import(dist('samples/transfer-succeeded.js'));

const DURATION = Number(process.env.BENCH_DURATION ?? 8);
const DELIVERIES = Number(process.env.BENCH_SCALE_DELIVERIES ?? 20_000);
const CONNECTIONS = 50;
// BENCH_CLI: another build's dist/cli.js, to compare two versions under the same harness.
const cli = process.env.BENCH_CLI ?? dist('cli.js');

/** A data dir with a config file (and a rules dir); `database` set: the nodes share that PostgreSQL database. */
function nodeDir({ database, rules = [] }) {
  const dir = mkdtempSync(join(tmpdir(), 'hookrelay-bench-'));
  mkdirSync(join(dir, 'rules'));
  rules.forEach((text, i) => writeFileSync(join(dir, 'rules', `r${i}.yaml`), text));
  writeFileSync(join(dir, 'hookrelay.yaml'), 'delivery:\n  allowNetworks: [127.0.0.1/32]\nretention:\n  enabled: false\n');
  return { dir, env: { HOOKRELAY_CONFIG: join(dir, 'hookrelay.yaml'), HOOKRELAY_RULES_DIR: join(dir, 'rules'), HOOKRELAY_SECRET: SECRET, ...(database && { HOOKRELAY_DATABASE_URL: database.url }) } };
}

async function startNodes(count, { database, rules }) {
  const { dir, env } = nodeDir({ database, rules });
  const nodes = [];
  for (let i = 0; i < count; i++) {
    const dataDir = join(dir, `node${i}`);
    nodes.push(await startServer(process.execPath, serveCommand(cli), { env: { ...env, HOOKRELAY_PORT: '0', HOOKRELAY_HOST: '127.0.0.1', HOOKRELAY_DATA_DIR: dataDir }, readPort: readServePort }));
  }
  return {
    nodes,
    cpuMs: () => nodes.reduce((sum, n) => sum + cpuMs(n.child.pid), 0),
    stop: async () => {
      for (const n of nodes) await stopServer(n.child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The same load generator over every node: CONNECTIONS split evenly, all running at once. */
async function maxRate(nodes, seconds) {
  const per = Math.floor(CONNECTIONS / nodes.length);
  const results = await Promise.all(nodes.map((n) => load({ url: `http://127.0.0.1:${n.port}`, connections: per, duration: seconds, requests: [signedRequest()] })));
  const ok = results.reduce((s, r) => s + r['2xx'], 0);
  return {
    ok,
    rps: Math.round(ok / Math.max(...results.map((r) => r.duration || seconds))),
    p50: Math.max(...results.map((r) => r.latency.p50)),
    p99: Math.max(...results.map((r) => r.latency.p99)),
    failed: results.reduce((s, r) => s + r.non2xx + r.errors + r.timeouts, 0),
  };
}

/** Open loop at `rate` over every node (rate / nodes each); p99 is the higher of the nodes' p99s. */
async function fixedRate(nodes, rate, seconds) {
  const per = rate / nodes.length;
  const results = await Promise.all(nodes.map((n) => fixedRateLoad({ port: n.port, rate: per, seconds, connections: Math.floor(CONNECTIONS / nodes.length), requests: rawSignedRequests(Math.ceil(per * seconds)) })));
  return { p50: Math.max(...results.map((r) => r.p50)), p99: Math.max(...results.map((r) => r.p99)), failed: results.reduce((s, r) => s + r.failed, 0) };
}

async function ingestCase(name, { backend, nodeCount, rate }) {
  const database = backend === 'postgres' ? await createBenchDatabase() : null;
  const cluster = await startNodes(nodeCount, { database });
  try {
    if (rate) {
      await fixedRate(cluster.nodes, rate, 2); // warm-up at the rate it is measured at
      const r = await fixedRate(cluster.nodes, rate, DURATION);
      return { name, rate, p50: r.p50, p99: r.p99, failed: r.failed };
    }
    await maxRate(cluster.nodes, 2); // warm-up
    const background = database ? await backgroundWalRate() : 0;
    const before = database && (await databaseSnapshot(database.name));
    const cpuBefore = cluster.cpuMs();
    const r = await maxRate(cluster.nodes, DURATION);
    const nodeCpuUs = Math.round(((cluster.cpuMs() - cpuBefore) * 1000) / Math.max(1, r.ok));
    // Counters are published when backends go idle: let them.
    if (database) await new Promise((res) => setTimeout(res, 1200));
    const work = database ? await databaseWork(before, await databaseSnapshot(database.name), r.ok, background) : {};
    return { name, rps: r.rps, p50: r.p50, p99: r.p99, failed: r.failed, nodeCpuUs, ...work };
  } finally {
    await cluster.stop();
    await database?.drop();
  }
}

/** Deliveries per state and last error: what a drain that never finished left behind. */
async function outboxStates(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query("SELECT state, attempts, last_status, left(last_error, 120) AS error, lease_token IS NOT NULL AS leased, count(*)::int AS n FROM deliveries WHERE state <> 'delivered' GROUP BY 1, 2, 3, 4, 5 ORDER BY n DESC LIMIT 10")).rows;
  } finally {
    await client.end();
  }
}

/** An outbox of DELIVERIES rows (one rule), written as ingest would, then drained by `workers` nodes. */
async function deliveryCase(name, { workers, sinkPort }) {
  const database = await createBenchDatabase();
  const rule = `id: sink\non: [transfer:succeeded]\nto:\n  url: http://127.0.0.1:${sinkPort}/d\nretry: { schedule: [0s, 1s, 1s, 1s, 1s, 1s, 1s, 1s, 1s, 1s, 1s, 1s] }\n`;
  const { dir } = nodeDir({ database, rules: [rule] });
  try {
    const loaded = await loadRuleSet(join(dir, 'rules'), {});
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
    const store = await PostgresStore.open({ url: database.url, poolSize: 8, statementTimeoutMs: 60_000, lockTimeoutMs: 5_000, connectTimeoutMs: 5_000, notifications: false });
    for (let filled = 0; filled < DELIVERIES; ) {
      const batch = [];
      for (let i = 0; i < 500 && filled < DELIVERIES; i++, filled++) {
        const body = sampleTransferSucceeded();
        const raw = Buffer.from(JSON.stringify(body));
        const deliveries = await planDeliveries(loaded.ruleSet, { source: 'checkout', event: body.event, body, raw });
        batch.push(store.saveEvent({ source: 'checkout', event: body.event, transferId: body.result.id, checkoutId: null, email: null, walletAddress: null, validation: 'valid', receivedAt: Date.now(), headers: {}, body: raw, ruleSetHash: loaded.ruleSet.hash, deliveries }));
      }
      await Promise.all(batch);
    }
    await store.close();
    await resetSink(sinkPort);
    const background = await backgroundWalRate();
    const before = await databaseSnapshot(database.name);
    const cluster = await startNodes(workers, { database, rules: [rule] });
    try {
      let sink = { count: 0 };
      let cpuFrom = null;
      const started = performance.now();
      while (sink.count < DELIVERIES) {
        await new Promise((r) => setTimeout(r, 100));
        sink = await sinkCount(sinkPort);
        if (cpuFrom === null && sink.count > 0) cpuFrom = { cpu: cluster.cpuMs(), count: sink.count };
        if (performance.now() - started > 180_000) throw new Error(`${name}: only ${sink.count} of ${DELIVERIES} delivered in 3 minutes; the outbox: ${JSON.stringify(await outboxStates(database.url))}`);
      }
      const nodeCpuUs = Math.round(((cluster.cpuMs() - cpuFrom.cpu) * 1000) / Math.max(1, DELIVERIES - cpuFrom.count));
      await new Promise((res) => setTimeout(res, 1200));
      const work = await databaseWork(before, await databaseSnapshot(database.name), DELIVERIES, background);
      return { name, deliveriesPerSec: Math.round(DELIVERIES / ((sink.last - sink.first) / 1000)), nodeCpuUs, ...work };
    } finally {
      await cluster.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await database.drop();
  }
}

/** One line per finished case, so a long run shows where it is. */
async function logged(run) {
  const result = await run();
  console.log(`  ${result.name}: ${['rps', 'deliveriesPerSec', 'p99', 'nodeCpuUs', 'dbCpuUs', 'walBytes'].filter((k) => result[k] !== undefined && result[k] !== null).map((k) => `${k}=${Math.round(result[k])}`).join(' ')}`);
  return result;
}

const fmt = (x, digits = 1) => (x === null || x === undefined ? '–' : Number(x).toFixed(digits));
const range = (rounds, key) => `${Math.min(...rounds.map((r) => r[key]))}–${Math.max(...rounds.map((r) => r[key]))}`;
const med = (rounds, key) => (rounds.some((r) => r[key] === null || r[key] === undefined) ? null : median(rounds.map((r) => r[key])));

function workColumns(rounds) {
  return {
    nodeCpuUs: Math.round(med(rounds, 'nodeCpuUs')),
    dbCpuUs: fmt(med(rounds, 'dbCpuUs'), 0),
    'commits/unit': fmt(med(rounds, 'commits'), 3),
    'rows ins/unit': fmt(med(rounds, 'inserted'), 2),
    'rows upd/unit': fmt(med(rounds, 'updated'), 2),
    'WAL B/unit': fmt(med(rounds, 'walBytes'), 0),
  };
}

const started = performance.now();
console.log(`bench:scale — ${CONNECTIONS} connections, ${DURATION}s per ingest case, ${DELIVERIES} deliveries per drain, ${ROUNDS} rounds, node ${process.version}, PostgreSQL at ${new URL(BENCH_DATABASE_URL).host}\n`);

const ingestCases = [
  ['SQLite, 1 node (durability full)', { backend: 'sqlite', nodeCount: 1 }],
  ['PostgreSQL, 1 node', { backend: 'postgres', nodeCount: 1 }],
  ['PostgreSQL, 2 nodes', { backend: 'postgres', nodeCount: 2 }],
];
const printDeliveryTable = () =>
  printTable(
    deliveryCases.map(([name], i) => ({ name, 'deliveries/s': Math.round(med(delivery[i], 'deliveriesPerSec')), range: range(delivery[i], 'deliveriesPerSec'), ...workColumns(delivery[i]) })),
    ['name', 'deliveries/s', 'range', 'nodeCpuUs', 'dbCpuUs', 'commits/unit', 'rows ins/unit', 'rows upd/unit', 'WAL B/unit'],
  );
const printIngestTable = () =>
  printTable(
    ingestCases.map(([name], i) => ({ name, 'events/s': Math.round(med(ingest[i], 'rps')), range: range(ingest[i], 'rps'), p99: med(ingest[i], 'p99'), failed: ingest[i].reduce((s, r) => s + r.failed, 0), ...workColumns(ingest[i]) })),
    ['name', 'events/s', 'range', 'p99', 'failed', 'nodeCpuUs', 'dbCpuUs', 'commits/unit', 'rows ins/unit', 'rows upd/unit', 'WAL B/unit'],
  );
const only = process.env.BENCH_ONLY; // `delivery`: the drains alone; `ingest`: the maximum rates alone
const ingest = only === 'delivery' ? [] : await inRounds(ingestCases.map(([name, options]) => () => logged(() => ingestCase(name, options))));
const [sqlite, pg1, pg2] = ingest;

if (only === 'ingest') {
  printIngestTable();
  console.log(`2 nodes / 1 node: ${formatRatio(medianRatio(pg2, pg1))}; PostgreSQL 1 node / SQLite: ${formatRatio(medianRatio(pg1, sqlite))}`);
  process.exit(0);
}
const sink = await startServer(process.execPath, [join(root, 'bench/lib/counting-sink.mjs')], { readPort: (line) => line.startsWith('{') && JSON.parse(line).port });
const deliveryCases = [
  ['PostgreSQL, 1 worker node', { workers: 1 }],
  ['PostgreSQL, 2 worker nodes', { workers: 2 }],
];
let delivery;
try {
  delivery = await inRounds(deliveryCases.map(([name, options]) => () => logged(() => deliveryCase(name, { ...options, sinkPort: sink.port }))));
} finally {
  await stopServer(sink.child); // a drain that fails must not leave the sink running
}

if (only === 'delivery') {
  printDeliveryTable();
  process.exit(0);
}
const halfCases = ingestCases.map(([name, options], i) => {
  const rate = Math.max(1, Math.round(median(ingest[i].map((r) => r.rps)) / 2));
  return [`${name} @ ${rate}/s (half load)`, { ...options, rate }];
});
const half = await inRounds(halfCases.map(([name, options]) => () => logged(() => ingestCase(name, options))));

console.log('\nIngest, maximum rate (per unit = per event)');
printIngestTable();
console.log('\nDelivery, an outbox drained into a loopback sink (per unit = per delivery)');
printDeliveryTable();
console.log('\nIngest at half of each maximum, open loop (ms; with 2 nodes the higher of their p99s)');
printTable(
  halfCases.map(([name], i) => ({ name, p50: med(half[i], 'p50'), p99: med(half[i], 'p99'), 'p99 range': range(half[i], 'p99'), failed: half[i].reduce((s, r) => s + r.failed, 0) })),
  ['name', 'p50', 'p99', 'p99 range', 'failed'],
);

const pgVsSqlite = medianRatio(pg1, sqlite);
const twoVsOne = medianRatio(pg2, pg1);
const workersTwoVsOne = medianRatio(delivery[1], delivery[0], 'deliveriesPerSec');
console.log(`\n${ROUNDS} rounds, cases alternating within each; medians; ratios are medians of the per-round ratios.`);
console.log('nodeCpuUs: CPU of the hookrelay processes (all threads) per unit; dbCpuUs: CPU of the database\'s backends per unit (not the WAL writer');
console.log('or checkpointer); commits, rows: pg_stat_database deltas; WAL B: pg_current_wal_lsn() delta less the server\'s idle WAL rate.');
console.log(`targets: PostgreSQL 1 node >= 0.5x SQLite (aim 0.8x): ${formatRatio(pgVsSqlite)} ${pgVsSqlite >= 0.5 ? 'met' : 'NOT met'}; 2 nodes >= 0.95x 1 node: ${formatRatio(twoVsOne)} ${twoVsOne >= 0.95 ? 'met' : 'NOT met'}; delivery 2 workers vs 1: ${formatRatio(workersTwoVsOne)}`);
console.log(`whole run: ${Math.round((performance.now() - started) / 1000)} s`);
