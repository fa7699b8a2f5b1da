// npm run bench:history — a long history on PostgreSQL: what it takes on disk, what retention costs while
// webhooks keep arriving, and how fast the admin list and searches stay at its newest and oldest end.
// 1) A fresh database (BENCH_HISTORY_DATABASE, default hookrelay_bench_history), migrated by starting the
//    build under test once (BENCH_CLI, default this checkout's dist/cli.js), seeded in SQL with
//    BENCH_HISTORY_EVENTS events (default 5,000,000; BENCH_HISTORY_QUICK=1: 200,000) received over the last
//    60 days, one delivery and 1.2 attempts per event (lib/history-seed.mjs). Seeding time and sizes.
// 2) Admin list and searches (checkout, e-mail, wallet, transfer id, time range): p50/p99 of sequential
//    requests for the newest page and for the page holding the oldest matches.
// 3) Ingest at half of a quickly measured maximum (or BENCH_HISTORY_RATE), open loop, for a fixed window
//    (BENCH_HISTORY_WINDOW s), in alternating rounds: with retention off, and with a retention pass that
//    removes the oldest 10 days (each retention round removes the next 10). Ack p50/p99, CPU per event of
//    the server process and of the database's backends, WAL per event; the pass's time, its WAL and the
//    sizes after it.
// 4) Claims and the commit-order read of new events through the build's own store: p50/p99 of claiming 10
//    due deliveries at a time (BENCH_HISTORY_CLAIMS pending ones, written for the newest events) and of
//    reading the last hour's new events 100 at a time.
// Two layouts in one run: BENCH_BASELINE_CLI names a build from before the partitions (schema 012, one table
// each); the same history is seeded for it in a database of its own and every figure is shown side by side
// with the build under test's (the ratio: under test / baseline). Unset: the build under test only.
// Every server is a fresh process with no rules. All traffic stays on 127.0.0.1.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { request } from 'undici';
import { readServePort } from './lib/drain.mjs';
import { fixedRateLoad } from './lib/fixed-rate.mjs';
import { DAY_MS, eventValues, seedHistory, tableSizes } from './lib/history-seed.mjs';
import { backgroundWalRate, BENCH_DATABASE_URL, createBenchDatabase, databaseSnapshot, databaseWork } from './lib/postgres-stats.mjs';
import { cpuMs, cpuUsPer, formatRatio, load, median, printTable, serveCommand, startServer, stopServer, timedAdminGet } from './lib/run.mjs';
import { SECRET, rawSignedRequests, signedRequest } from './lib/signed-requests.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
// BENCH_CLI: another build's dist/cli.js, to measure its schema and code under the same harness.
const cli = process.env.BENCH_CLI ?? join(root, 'dist/cli.js');
const baselineCli = process.env.BENCH_BASELINE_CLI ?? null;
const { encodeEventCursor } = await import(join(dirname(cli), 'operations/cursor.js'));

const QUICK = process.env.BENCH_HISTORY_QUICK === '1';
const EVENTS = Number(process.env.BENCH_HISTORY_EVENTS ?? (QUICK ? 200_000 : 5_000_000));
const DAYS = 60;
const PRUNED_DAYS = 10;
const WINDOW_S = Number(process.env.BENCH_HISTORY_WINDOW ?? (QUICK ? 15 : 60));
// Each retention round removes the next 10 days; at least 10 are left.
const ROUNDS = Math.min(DAYS / PRUNED_DAYS - 1, Number(process.env.BENCH_ROUNDS ?? 3));
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? (QUICK ? 40 : 100));
const FIXED_RATE = Number(process.env.BENCH_HISTORY_RATE ?? 0);
const PASS_TIMEOUT_MS = Number(process.env.BENCH_HISTORY_PASS_TIMEOUT ?? 1800) * 1000;
const DATABASE = process.env.BENCH_HISTORY_DATABASE ?? 'hookrelay_bench_history';
const CLAIMS = Number(process.env.BENCH_HISTORY_CLAIMS ?? 2000);
// retention.partitionDays of every node (the build's default when unset): the width of the seeded partitions.
const PARTITION_DAYS = process.env.BENCH_HISTORY_PARTITION_DAYS ? Number(process.env.BENCH_HISTORY_PARTITION_DAYS) : null;
const CONNECTIONS = 50;
const PAGE = 50;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const mb = (bytes) => (bytes / 1024 / 1024).toFixed(0);
const seconds = (ms) => (ms / 1000).toFixed(1);

async function query(url, sql, values = []) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, values)).rows;
  } finally {
    await client.end();
  }
}

/** `hookrelay serve` on the database, no rules; `retainDays` set: retention on, its one pass ~5 s after start. */
async function startNode(database, retainDays, build = cli) {
  const dir = mkdtempSync(join(tmpdir(), 'hookrelay-bench-'));
  mkdirSync(join(dir, 'rules'));
  const width = PARTITION_DAYS ? `, partitionDays: ${PARTITION_DAYS}` : '';
  const retention = retainDays ? `{ enabled: true, maxAgeDays: ${retainDays}, maxEvents: 1000000000, intervalMs: 86400000${width} }` : `{ enabled: false${width} }`;
  writeFileSync(join(dir, 'hookrelay.yaml'), `delivery:\n  allowNetworks: [127.0.0.1/32]\nretention: ${retention}\n`);
  const env = { HOOKRELAY_PORT: '0', HOOKRELAY_HOST: '127.0.0.1', HOOKRELAY_DATA_DIR: dir, HOOKRELAY_RULES_DIR: join(dir, 'rules'), HOOKRELAY_CONFIG: join(dir, 'hookrelay.yaml'), HOOKRELAY_SECRET: SECRET, HOOKRELAY_DATABASE_URL: database.url, HOOKRELAY_LOG_LEVEL: 'info' };
  const server = await startServer(process.execPath, serveCommand(build), { env, readPort: readServePort });
  return {
    ...server,
    stop: async () => {
      await stopServer(server.child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The history's tables in either layout (pending deliveries apart from the settled ones, or one deliveries table). */
const HISTORY_TABLES = ['events', 'deliveries', 'pending_deliveries', 'delivery_history', 'delivery_attempts'];

/** How the build under test laid the history out: partitioned tables and their partitions, schema version. */
async function layout(url) {
  const rows = await query(url, `SELECT c.relname AS name, c.relkind = 'p' AS partitioned, pg_get_partkeydef(c.oid) AS key,
      (SELECT count(*) FROM pg_inherits i WHERE i.inhparent = c.oid)::int AS partitions
    FROM pg_class c WHERE c.relname IN (${HISTORY_TABLES.map((t) => `'${t}'`).join(', ')}) AND c.relnamespace = to_regnamespace(current_schema()) ORDER BY 1`);
  const version = (await query(url, 'SELECT max(version) AS v FROM schema_migrations'))[0].v;
  const parts = rows.filter((r) => r.partitioned);
  return { version, name: parts.length ? `partitioned (${parts.map((r) => `${r.name} by ${r.key}`).join('; ')})` : 'one table each' };
}

/** The history's own tables (events, deliveries, attempts) and the whole database, in bytes. */
async function historySize(url) {
  const { tables, database } = await tableSizes(url);
  const history = tables.filter((t) => HISTORY_TABLES.includes(t.name));
  return { tables, database, tableBytes: history.reduce((s, t) => s + t.tableBytes, 0), indexBytes: history.reduce((s, t) => s + t.indexBytes, 0) };
}

/** Tables a node keeps empty or nearly so, whatever the history: the seeding leaves them alone. */
const NOT_HISTORY = new Set(['schema_migrations', 'rule_sets', 'admin_jobs', 'store_health', 'nodes', 'leases', 'settings', 'console_sessions', 'outages', 'delivery_redrives']);

/** Tables of the schema this generator does not know that the seeding left empty (e.g. a newer layout's own). */
async function emptyNewTables(url, tables) {
  const empty = [];
  for (const { name } of tables) {
    if (NOT_HISTORY.has(name)) continue;
    if ((await query(url, `SELECT NOT EXISTS (SELECT 1 FROM ${name}) AS empty`))[0].empty) empty.push(name);
  }
  return empty;
}

/** p50/p99 (ms) of one admin request per sample, sequential, after two unmeasured ones. */
async function latency(urls) {
  await timedAdminGet(urls[0]);
  await timedAdminGet(urls[1 % urls.length]);
  const times = [];
  for (const url of urls) times.push(await timedAdminGet(url));
  times.sort((a, b) => a - b);
  const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(1);
  return { p50: at(0.5), p99: at(0.99) };
}

/** The cursor of a page holding the oldest matches of `where`: at the 51st oldest match, or the newest if fewer. */
async function oldestPageCursor(client, where, values) {
  const { rows } = await client.query(`SELECT id, received_at FROM (SELECT id, received_at, row_number() OVER (ORDER BY id) AS r, count(*) OVER () AS n FROM events WHERE ${where}) s WHERE r = least(${PAGE + 1}, n)`, values);
  return rows[0] ? `&cursor=${encodeEventCursor({ id: Number(rows[0].id), receivedAt: Number(rows[0].received_at) })}` : '';
}

/** The query strings of every search, newest page and oldest page, one per sample (read from the seeded rows). */
async function searches(client) {
  const samples = Array.from({ length: SAMPLES }, (_, k) => k);
  const values = async (expr, args) => {
    const list = [];
    for (const arg of args) list.push((await client.query(`SELECT ${expr('$1::bigint')} AS v`, [arg])).rows[0].v);
    return list;
  };
  const buyers = samples.map((k) => (k * 7919 * 37) % 200_000);
  const filtered = async (name, where, list) => {
    const oldest = [];
    for (const v of list) oldest.push(`${name}=${encodeURIComponent(v)}${await oldestPageCursor(client, where, [v])}`);
    return { name, newest: list.map((v) => `${name}=${encodeURIComponent(v)}`), oldest };
  };
  const newest = (await client.query(`SELECT transfer_id, received_at FROM events ORDER BY id DESC LIMIT ${SAMPLES}`)).rows;
  const oldest = (await client.query(`SELECT id, transfer_id, received_at FROM events ORDER BY id LIMIT ${SAMPLES + PAGE + 1}`)).rows;
  const [newestAt, oldestAt] = [Number(newest[0].received_at), Number(oldest[0].received_at)];
  const hour = 3_600_000;
  return [
    { name: 'list, no filter', newest: samples.map(() => ''), oldest: oldest.slice(PAGE, PAGE + SAMPLES).map((r) => `cursor=${encodeEventCursor({ id: Number(r.id), receivedAt: Number(r.received_at) })}`) },
    await filtered('checkoutId', 'checkout_id = $1', await values(eventValues.checkoutId, samples.map((k) => k * 7))),
    await filtered('email', 'lower(email) = lower($1)', await values(eventValues.email, buyers)),
    await filtered('walletAddress', 'lower(wallet_address) = lower($1)', await values(eventValues.wallet, buyers)),
    { name: 'transferId', newest: newest.map((r) => `transferId=${r.transfer_id}`), oldest: oldest.slice(0, SAMPLES).map((r) => `transferId=${r.transfer_id}`) },
    {
      name: 'time range (1 h)',
      newest: samples.map((k) => `receivedFrom=${newestAt - hour - k * 1000}&receivedTo=${newestAt - k * 1000}`),
      oldest: samples.map((k) => `receivedFrom=${oldestAt + k * 1000}&receivedTo=${oldestAt + hour + k * 1000}`),
    },
  ];
}

/** Admin list and searches, newest page and the page of the oldest matches, through the admin API. */
async function adminCases(database, build) {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const cases = await searches(client).finally(() => client.end());
  const node = await startNode(database, null, build);
  try {
    const api = `http://127.0.0.1:${node.port}/admin/api/events?limit=${PAGE}&`;
    const rows = [];
    for (const c of cases) {
      const [n, o] = [await latency(c.newest.map((q) => api + q)), await latency(c.oldest.map((q) => api + q))];
      rows.push({ search: c.name, 'newest p50': n.p50, 'newest p99': n.p99, 'oldest p50': o.p50, 'oldest p99': o.p99 });
    }
    return rows;
  } finally {
    await node.stop();
  }
}

/** The maximum ingest rate over the seeded history, quickly: 50 connections for a few seconds after a warm-up. */
async function maxRate(database, build) {
  const node = await startNode(database, null, build);
  try {
    await load({ url: `http://127.0.0.1:${node.port}`, connections: CONNECTIONS, duration: 2, requests: [signedRequest()] });
    const result = await load({ url: `http://127.0.0.1:${node.port}`, connections: CONNECTIONS, duration: QUICK ? 4 : 8, requests: [signedRequest()] });
    return Math.round(result['2xx'] / (result.duration || 1));
  } finally {
    await node.stop();
  }
}

/**
 * Waits for the node's retention pass: its log line (with its duration) or, from a build that logs none,
 * the last-pass gauge of /metrics (then only its end is known). Resolves with { durationMs, endedAt }.
 */
async function awaitRetentionPass(node) {
  const deadline = Date.now() + PASS_TIMEOUT_MS;
  while (Date.now() < deadline) {
    for (const line of readFileSync(node.logPath, 'utf8').split('\n')) {
      if (!line.includes('"retention pass"')) continue;
      try {
        const entry = JSON.parse(line);
        return { durationMs: entry.durationMs, endedAt: Date.parse(entry.time), interrupted: entry.interrupted };
      } catch {
        // still being written
      }
    }
    const metrics = await (await request(`http://127.0.0.1:${node.port}/metrics`)).body.text();
    const lastRun = Number(/^hookrelay_retention_last_run_timestamp_seconds (\S+)$/m.exec(metrics)?.[1] ?? 0);
    // The log line is written asynchronously: give it a few seconds after the gauge.
    if (lastRun > 0 && Date.now() - lastRun * 1000 > 3000) return { durationMs: null, endedAt: lastRun * 1000, interrupted: false };
    await sleep(250);
  }
  throw new Error(`no retention pass logged within ${PASS_TIMEOUT_MS / 1000} s`);
}

/** Events received before `ms`, exactly. */
const countOlder = async (url, ms) => Number((await query(url, 'SELECT count(*) AS n FROM events WHERE received_at < $1', [ms]))[0].n);

const walSince = async (lsn) => Number((await query(BENCH_DATABASE_URL, 'SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::bigint AS b', [lsn]))[0].b);

/** One window of open-loop ingest; `retainDays` set: the node's retention pass removes what is older. */
async function windowRound(database, rate, retainDays, background, build) {
  const cutoff = Date.now() - retainDays * DAY_MS;
  const older = retainDays ? await countOlder(database.url, cutoff) : 0;
  const node = await startNode(database, retainDays, build);
  try {
    await fixedRateLoad({ port: node.port, rate, seconds: 1, connections: CONNECTIONS, requests: rawSignedRequests(rate) }); // warm-up
    const requests = rawSignedRequests(Math.round(rate * WINDOW_S));
    const before = await databaseSnapshot(database.name);
    const cpuBefore = cpuMs(node.child.pid);
    const windowStart = Date.now();
    const result = await fixedRateLoad({ port: node.port, rate, seconds: WINDOW_S, connections: CONNECTIONS, requests });
    const nodeCpuUs = cpuUsPer(node.child.pid, cpuBefore, result.sent);
    await sleep(1200); // backends publish their counters when idle
    const work = await databaseWork(before, await databaseSnapshot(database.name), result.ok, background);
    const row = { p50: result.p50, p99: result.p99, failed: result.failed, ok: result.ok, nodeCpuUs, dbCpuUs: work.dbCpuUs, walBytes: work.walBytes };
    if (!retainDays) return row;
    const pass = await awaitRetentionPass(node);
    const totalWal = await walSince(before.lsn);
    const elapsedS = (Date.now() - windowStart) / 1000;
    const pruned = older - (await countOlder(database.url, cutoff));
    const size = await historySize(database.url);
    const startedAt = pass.durationMs === null ? null : pass.endedAt - pass.durationMs;
    return { ...row, pass: { ...pass, pruned, startsInWindowS: startedAt && (startedAt - windowStart) / 1000, endsInWindowS: (pass.endedAt - windowStart) / 1000, totalWal, elapsedS, size } };
  } finally {
    await node.stop();
  }
}

/** p50/p99 (ms) of a list of durations. */
function quantiles(times) {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { p50: Number(at(0.5).toFixed(2)), p99: Number(at(0.99).toFixed(2)), n: sorted.length };
}

/**
 * Claims and the commit-order read through the build's own store (no HTTP): CLAIMS pending deliveries for the
 * newest events, claimed 10 at a time until none is left; then the last hour's new events read 100 at a time.
 */
async function storeTimings(database, build) {
  const { PostgresStore } = await import(join(dirname(build), 'store/postgres/postgres-store.js'));
  const store = await PostgresStore.open({ url: database.url, poolSize: 2, statementTimeoutMs: 60_000, lockTimeoutMs: 5_000, connectTimeoutMs: 5_000, notifications: false });
  try {
    const newest = (await query(database.url, `SELECT id FROM events ORDER BY id DESC LIMIT ${CLAIMS}`)).map((r) => Number(r.id));
    const delivery = { ruleId: 'bench-claim', ruleSetHash: 'benchhistory', body: null, contentType: 'application/json' };
    await store.createDeliveriesForEvents(newest.map((eventId) => ({ eventId, deliveries: [delivery] })), 'replay');
    // The first claims of a connection are planned for their values (over every partition): warm-up, unmeasured.
    for (let i = 0; i < 10; i++) await store.claimDueDeliveries({ now: Date.now() + 1_000, limit: 10, leaseMs: 600_000 });
    const claims = [];
    for (;;) {
      const t = performance.now();
      const got = await store.claimDueDeliveries({ now: Date.now() + 1_000, limit: 10, leaseMs: 600_000 });
      claims.push(performance.now() - t);
      if (got.length === 0) break;
    }
    let position = await store.streamPosition({ receivedFrom: Date.now() - 3_600_000 });
    for (let i = 0; i < 10; i++) position = (await store.readNewEvents({}, position, 100, false)).position;
    const reads = [];
    for (let i = 0; i < 200; i++) {
      const t = performance.now();
      const page = await store.readNewEvents({}, position, 100, false);
      reads.push(performance.now() - t);
      if (page.events.length === 0) break;
      position = page.position;
    }
    // Where deliveries are stored (a view over two tables, or one table) decides where they are deleted from.
    const split = (await query(database.url, "SELECT to_regclass('pending_deliveries') IS NOT NULL AS split"))[0].split;
    for (const table of split ? ['pending_deliveries', 'delivery_history'] : ['deliveries']) await query(database.url, `DELETE FROM ${table} WHERE rule_id = 'bench-claim'`);
    return { claim: quantiles(claims), read: quantiles(reads) };
  } finally {
    await store.close();
  }
}

const started = performance.now();
const load1 = () => loadavg()[0].toFixed(1);
console.log(`bench:history — ${EVENTS.toLocaleString('en')} events over ${DAYS} days, ${ROUNDS} rounds of ${WINDOW_S} s windows, ${SAMPLES} samples per search, node ${process.version}, build ${cli}, PostgreSQL at ${new URL(BENCH_DATABASE_URL).host}, load average ${load1()}`);
async function runLayout(build, databaseName, fixedRate) {
const summary = { build };
const database = await createBenchDatabase(databaseName);
try {
  (await startNode(database, null, build).then((n) => n.stop())); // migrates, and runs what the build does at start
  const shape = await layout(database.url);
  console.log(`\n=== ${build}: schema version ${shape.version}, history ${shape.name}\n`);
  summary.layout = `schema ${shape.version}, ${shape.name}`;

  const seedStarted = performance.now();
  let shown = 0;
  const notes = await seedHistory(database.url, {
    events: EVENTS,
    days: DAYS,
    endMs: Date.now(),
    extraSql: process.env.BENCH_HISTORY_SEED_SQL ? readFileSync(process.env.BENCH_HISTORY_SEED_SQL, 'utf8') : null,
    onProgress: (done, total) => {
      if (done / total >= shown + 0.1 || done === total) {
        shown = Math.floor((done / total) * 10) / 10;
        process.stdout.write(`  seeded ${done.toLocaleString('en')} events, ${seconds(performance.now() - seedStarted)} s\n`);
      }
    },
  });
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  summary.seedSeconds = seedSeconds;
  for (const note of notes) console.log(`  note: ${note}`);
  const seeded = await historySize(database.url);
  const unseeded = await emptyNewTables(database.url, seeded.tables);
  console.log(`\nSeeded in ${seedSeconds.toFixed(0)} s (rows written in SQL, indexes built, VACUUM ANALYZE, CHECKPOINT)`);
  printTable(
    seeded.tables.filter((t) => t.tableBytes + t.indexBytes > 1024 * 1024).map((t) => ({ table: t.name, 'rows (planner)': t.rows.toLocaleString('en'), partitions: t.partitions, 'data MB': mb(t.tableBytes), 'index MB': mb(t.indexBytes) })),
    ['table', 'rows (planner)', 'partitions', 'data MB', 'index MB'],
  );
  const perEvent = (seeded.tableBytes + seeded.indexBytes) / EVENTS;
  Object.assign(summary, { seeded, perEvent });
  console.log(`history (events + deliveries + attempts): ${mb(seeded.tableBytes)} MB data + ${mb(seeded.indexBytes)} MB indexes = ${Math.round(perEvent)} bytes per event (${(perEvent * (EVENTS / DAYS) / 1024 ** 3).toFixed(2)} GiB per day at ${Math.round(EVENTS / DAYS).toLocaleString('en')} events a day); database ${mb(seeded.database)} MB`);
  if (unseeded.length) console.log(`tables left empty by the seeding (extend lib/history-seed.mjs or BENCH_HISTORY_SEED_SQL): ${unseeded.join(', ')}`);

  console.log(`\nAdmin list and searches, ${PAGE} per page, ${SAMPLES} sequential requests each (ms)`);
  summary.admin = await adminCases(database, build);
  printTable(summary.admin, ['search', 'newest p50', 'newest p99', 'oldest p50', 'oldest p99']);

  summary.timings = await storeTimings(database, build);
  console.log(`\nClaims of 10 (${CLAIMS} pending, newest events): p50 ${summary.timings.claim.p50} ms, p99 ${summary.timings.claim.p99} ms; commit-order read of 100 new events (last hour): p50 ${summary.timings.read.p50} ms, p99 ${summary.timings.read.p99} ms`);

  const max = fixedRate ? null : await maxRate(database, build);
  const rate = fixedRate || Math.max(1, Math.round(max / 2));
  summary.rate = rate;
  console.log(`\nIngest at ${rate}/s (${max ? `half of the ${max}/s measured` : 'BENCH_HISTORY_RATE'}), ${WINDOW_S} s windows, rounds alternating without and with a retention pass`);
  const background = await backgroundWalRate();
  const quiet = [];
  const pruning = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const retainDays = DAYS - round * PRUNED_DAYS;
    const pair = round % 2 ? [null, retainDays] : [retainDays, null]; // the second of a pair tends to win: alternate
    for (const days of pair) {
      const r = await windowRound(database, rate, days, background, build);
      (days ? pruning : quiet).push(r);
      console.log(`  round ${round}, ${days ? `retention to ${days} days` : 'no retention'}: p50 ${r.p50} p99 ${r.p99} ms, ${r.nodeCpuUs} µs/event${r.pass ? `, pass ended ${r.pass.endsInWindowS.toFixed(1)} s into the window, ${r.pass.pruned} events removed` : ''}`);
    }
  }
  const med = (rows, key) => Math.round(median(rows.map((r) => r[key])) * 10) / 10;
  const ratio = (key) => formatRatio(median(pruning.map((r, i) => r[key] / quiet[i][key])));
  const windowRow = (name, rows) => ({
    case: name, p50: med(rows, 'p50'), p99: med(rows, 'p99'), 'p99 range': `${Math.min(...rows.map((r) => r.p99))}–${Math.max(...rows.map((r) => r.p99))}`,
    'node µs/event': Math.round(med(rows, 'nodeCpuUs')), 'db µs/event': rows.some((r) => r.dbCpuUs === null) ? '–' : Math.round(med(rows, 'dbCpuUs')),
    'WAL B/event': Math.round(med(rows, 'walBytes')), failed: rows.reduce((s, r) => s + r.failed, 0),
  });
  console.log(`\nAck latency (ms) and work per event during the ${WINDOW_S} s window, medians of ${ROUNDS} rounds`);
  summary.windows = [windowRow('no retention', quiet), windowRow(`retention removing ${PRUNED_DAYS} days`, pruning)];
  printTable(summary.windows, ['case', 'p50', 'p99', 'p99 range', 'node µs/event', 'db µs/event', 'WAL B/event', 'failed']);
  summary.ratios = { p99: median(pruning.map((r, i) => r.p99 / quiet[i].p99)), nodeCpu: median(pruning.map((r, i) => r.nodeCpuUs / quiet[i].nodeCpuUs)) };
  console.log(`with retention / without, median of per-round ratios: p99 ${ratio('p99')}, node CPU ${ratio('nodeCpuUs')}${pruning.every((r) => r.dbCpuUs) ? `, database CPU ${ratio('dbCpuUs')}` : ''}`);

  console.log('\nRetention passes (each removes the oldest 10 days left)');
  const ingestWalPerEvent = med(quiet, 'walBytes');
  summary.passes = pruning.map((r, i) => {
      const wal = Math.max(0, r.pass.totalWal - ingestWalPerEvent * r.ok - background * r.pass.elapsedS);
      return {
        pass: `${i + 1}${r.pass.interrupted ? ' (interrupted)' : ''}`, 'events removed': r.pass.pruned.toLocaleString('en'),
        seconds: r.pass.durationMs === null ? '–' : seconds(r.pass.durationMs),
        'window s': `${r.pass.startsInWindowS === null ? '?' : r.pass.startsInWindowS.toFixed(1)}–${r.pass.endsInWindowS.toFixed(1)}`,
        'WAL MB': mb(wal), 'WAL B/event removed': r.pass.pruned ? Math.round(wal / r.pass.pruned) : '–',
        'history data MB after': mb(r.pass.size.tableBytes), 'index MB after': mb(r.pass.size.indexBytes), 'database MB after': mb(r.pass.size.database),
      };
    });
  printTable(
    summary.passes,
    ['pass', 'events removed', 'seconds', 'window s', 'WAL MB', 'WAL B/event removed', 'history data MB after', 'index MB after', 'database MB after'],
  );
  console.log(`before the first pass: history data ${mb(seeded.tableBytes)} MB, indexes ${mb(seeded.indexBytes)} MB, database ${mb(seeded.database)} MB`);
  console.log('window s: when the pass started and ended, from the start of the measured window (seconds: the pass\'s own time, from its log).');
  console.log('WAL of a pass: WAL from the window start to the pass end, less the window\'s ingest (the no-retention rounds\' WAL per event) and the server\'s idle rate.');
  console.log('node µs: CPU of the hookrelay process (all threads) per acknowledged event; db µs: CPU of the database\'s backends (retention\'s included) per event.');
  return summary;
} finally {
  if (process.env.BENCH_HISTORY_KEEP === '1') console.log(`kept database ${databaseName}`);
  else await database.drop();
}
}

// The baseline first, its measured rate then used for both layouts: the same load on each.
const layouts = baselineCli ? [[baselineCli, `${DATABASE}_baseline`], [cli, DATABASE]] : [[cli, DATABASE]];
const summaries = [];
for (const [build, name] of layouts) summaries.push(await runLayout(build, name, FIXED_RATE || summaries[0]?.rate || 0));
if (summaries.length === 2) {
  const [b, t] = summaries;
  const passMedian = (s, key) => median(s.passes.map((p) => Number(p[key]) || 0));
  const num = (v) => Number(v);
  const row = (what, base, test, unit = '') => ({ figure: what, baseline: `${base}${unit}`, 'under test': `${test}${unit}`, ratio: base ? formatRatio(test / base) : 'n/a' });
  console.log(`\nSide by side — baseline: ${b.layout}; under test: ${t.layout}; ${EVENTS.toLocaleString('en')} events over ${DAYS} days, ingest at ${t.rate}/s`);
  const rows = [
    row('seeding s', Math.round(b.seedSeconds), Math.round(t.seedSeconds)),
    row('history bytes per event (data + indexes)', Math.round(b.perEvent), Math.round(t.perEvent)),
    row('retention pass s (median)', passMedian(b, 'seconds'), passMedian(t, 'seconds')),
    row('retention pass WAL MB (median)', passMedian(b, 'WAL MB'), passMedian(t, 'WAL MB')),
    row('history data MB after the last pass', num(b.passes.at(-1)['history data MB after']), num(t.passes.at(-1)['history data MB after'])),
    row('index MB after the last pass', num(b.passes.at(-1)['index MB after']), num(t.passes.at(-1)['index MB after'])),
    row('ack p99 ms, no retention', b.windows[0].p99, t.windows[0].p99),
    row('ack p99 ms, retention window', b.windows[1].p99, t.windows[1].p99),
    row('node µs/event, no retention', b.windows[0]['node µs/event'], t.windows[0]['node µs/event']),
    row('node µs/event, retention window', b.windows[1]['node µs/event'], t.windows[1]['node µs/event']),
    row('retention window / none: p99', b.ratios.p99.toFixed(2), t.ratios.p99.toFixed(2), 'x'),
    row('retention window / none: node CPU', b.ratios.nodeCpu.toFixed(2), t.ratios.nodeCpu.toFixed(2), 'x'),
    row('claim of 10, p50 ms', b.timings.claim.p50, t.timings.claim.p50),
    row('claim of 10, p99 ms', b.timings.claim.p99, t.timings.claim.p99),
    row('commit-order read of 100, p50 ms', b.timings.read.p50, t.timings.read.p50),
    row('commit-order read of 100, p99 ms', b.timings.read.p99, t.timings.read.p99),
    ...b.admin.flatMap((a, i) => [
      row(`${a.search}: newest p99 ms`, a['newest p99'], t.admin[i]['newest p99']),
      row(`${a.search}: oldest p99 ms`, a['oldest p99'], t.admin[i]['oldest p99']),
    ]),
  ];
  printTable(rows, ['figure', 'baseline', 'under test', 'ratio']);
}
console.log(`whole run: ${Math.round((performance.now() - started) / 1000)} s; load average now ${load1()} (the machine's, this run's included)`);
