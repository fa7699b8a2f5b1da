// npm run bench:admin — the admin API over a large store, in one run on one machine.
// 1) A store of EVENTS events (default 1,000,000; realistic spread of checkouts, e-mails, wallets, a share
//    unrecognised, a share with dead or delivered deliveries), written straight into SQLite.
// 2) p50/p99 of one list page per filter, at page 1 and deep in the list (cursor near the oldest events),
//    and of event detail: sequential requests through `hookrelay serve`.
// 3) Replay of REPLAY events (default 100,000) through a rule to a local counting sink as an admin job,
//    compared with the delivery loop draining an outbox of the same size (bench:delivery's case).
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { hookrelayDrain, readServePort, resetSink, sinkCount } from './lib/drain.mjs';
import { BENCH_ADMIN_TOKEN, printTable, ratio, serveCommand, startServer, stopServer, timedAdminGet } from './lib/run.mjs';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const REPLAY = Math.min(EVENTS, Number(process.env.BENCH_REPLAY ?? 100_000));
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);
const CONCURRENCY = 64;
const TOKEN = BENCH_ADMIN_TOKEN;
const STEP_MS = 10; // one event every 10 ms of "received" time
const root = fileURLToPath(new URL('..', import.meta.url));
const dist = (p) => join(root, 'dist', p);
const { SqliteStore } = await import(dist('store/sqlite/sqlite-store.js'));
const { encodeEventCursor } = await import(dist('operations/cursor.js'));

const T0 = Date.UTC(2026, 0, 1);
const checkouts = Array.from({ length: 1000 }, () => randomUUID());
const emails = Array.from({ length: 50_000 }, (_, i) => `buyer${i}@example.com`);
const template = JSON.stringify({
  event: 'transfer:succeeded',
  result: {
    id: 'ID', checkoutId: 'CHECKOUT', walletAddress: 'WALLET', walletType: 'EMBEDDED', email: 'EMAIL', quantity: 2,
    paymentMethod: 'BUY_WITH_CARD', networkFeeUsd: 0.02, totalPriceUsd: 49.02, createdAt: '2026-01-01T00:00:00.000+00:00',
    paymentCompletedAt: '2026-01-01T00:00:02.150+00:00', transferCompletedAt: '2026-01-01T00:00:11.570+00:00',
    claimedTokens: { tokenIds: ['4711', '4712'], transactionHashes: { [`0x${'ab'.repeat(32)}`]: ['4711', '4712'] } },
  },
});

/** Writes the store directly (setup, not measured): same schema and migrations the server uses. */
async function buildStore(dataDir) {
  const store = new SqliteStore({ dataDir, durability: 'normal' });
  const db = store.db;
  const insertEvent = db.prepare(`INSERT INTO events (source, event, transfer_id, checkout_id, email, wallet_address, validation, received_at, last_received_at, headers, body)
    VALUES ('checkout', ?, ?, ?, ?, ?, ?, ?, ?, '{"content-type":"application/json"}', ?)`);
  const insertDelivery = db.prepare(`INSERT INTO deliveries (event_id, rule_id, rule_set_hash, origin, state, content_type, attempts, created_at, updated_at, dead_reason)
    VALUES (?, 'fwd', 'seed', 'ingest', ?, 'application/json', 1, ?, ?, ?)`);
  const fill = db.transaction((from, to) => {
    for (let i = from; i < to; i++) {
      const unrecognised = i % 100 === 0;
      const id = randomUUID();
      const checkout = checkouts[i % checkouts.length];
      const email = emails[(i * 7919) % emails.length];
      const wallet = `0x${randomBytes(20).toString('hex')}`;
      const body = unrecognised
        ? JSON.stringify({ event: 'transfer:refunded', result: { id, checkoutId: checkout } })
        : template.replace('ID', id).replace('CHECKOUT', checkout).replace('EMAIL', email).replace('WALLET', wallet);
      const at = T0 + i * STEP_MS;
      const eventId = insertEvent.run(unrecognised ? 'transfer:refunded' : 'transfer:succeeded', id, checkout, email, wallet, unrecognised ? 'unrecognised' : 'valid', at, at, Buffer.from(body)).lastInsertRowid;
      if (i % 10 === 3) insertDelivery.run(eventId, 'dead', at, at, 'HTTP 410');
      else if (i % 5 === 1) insertDelivery.run(eventId, 'delivered', at, at, null);
    }
  });
  for (let from = 0; from < EVENTS; from += 20_000) fill(from, Math.min(EVENTS, from + 20_000));
  db.exec('ANALYZE');
  await store.close();
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

async function latency(name, urls) {
  for (let i = 0; i < 20; i++) await timedAdminGet(urls(i)); // warm-up
  const times = [];
  for (let i = 0; i < SAMPLES; i++) times.push(await timedAdminGet(urls(i)));
  times.sort((a, b) => a - b);
  return { name, p50: percentile(times, 50).toFixed(2), p99: percentile(times, 99).toFixed(2), max: times.at(-1).toFixed(2) };
}

console.log(`bench:admin — ${EVENTS} stored events, ${SAMPLES} sequential requests per case, replay of ${REPLAY}, node ${process.version}\n`);
const dataDir = mkdtempSync(join(tmpdir(), 'hookrelay-bench-'));
const sink = await startServer(process.execPath, [join(root, 'bench/lib/counting-sink.mjs')], { readPort: (l) => l.startsWith('{') && JSON.parse(l).port });
try {
  const built = performance.now();
  await buildStore(dataDir);
  console.log(`store built in ${((performance.now() - built) / 1000).toFixed(1)} s`);
  const rulesDir = join(dataDir, 'rules');
  mkdirSync(rulesDir);
  writeFileSync(join(rulesDir, 'replay.yaml'), `id: replay-sink\non: [transfer:succeeded]\nto:\n  url: http://127.0.0.1:${sink.port}/replay\nconcurrency: ${CONCURRENCY}\n`);
  const config = join(dataDir, 'hookrelay.yaml');
  writeFileSync(config, `delivery:\n  allowNetworks: [127.0.0.1/32]\n  maxInFlight: ${CONCURRENCY}\n  batchSize: ${CONCURRENCY}\nretention:\n  enabled: false\n`);
  const server = await startServer(process.execPath, serveCommand(dist('cli.js')), {
    env: { HOOKRELAY_PORT: '0', HOOKRELAY_HOST: '127.0.0.1', HOOKRELAY_DATA_DIR: dataDir, HOOKRELAY_RULES_DIR: rulesDir, HOOKRELAY_SECRET: 's', HOOKRELAY_CONFIG: config },
    readPort: readServePort,
  });
  const api = `http://127.0.0.1:${server.port}/admin/api`;
  const deep = (id) => encodeEventCursor({ id, receivedAt: T0 + (id - 1) * STEP_MS });
  const nearOldest = Math.max(2, Math.floor(EVENTS * 0.02));
  const rows = [];
  try {
    rows.push(await latency('list, no filter, page 1', () => `${api}/events?limit=50`));
    rows.push(await latency('list, no filter, deep page', (i) => `${api}/events?limit=50&cursor=${deep(nearOldest + i * 97)}`));
    rows.push(await latency('list, email', (i) => `${api}/events?limit=50&email=${emails[(i * 31) % emails.length]}`));
    rows.push(await latency('list, checkout id, page 1', (i) => `${api}/events?limit=50&checkoutId=${checkouts[i % checkouts.length]}`));
    rows.push(await latency('list, checkout id, deep page', (i) => `${api}/events?limit=50&checkoutId=${checkouts[i % checkouts.length]}&cursor=${deep(nearOldest + i * 97)}`));
    rows.push(await latency('list, event name, deep page', (i) => `${api}/events?limit=50&event=transfer:succeeded&cursor=${deep(nearOldest + i * 97)}`));
    rows.push(await latency('list, unrecognised', () => `${api}/events?limit=50&validation=unrecognised`));
    rows.push(await latency('list, delivery state dead', (i) => `${api}/events?limit=50&deliveryState=dead&cursor=${deep(Math.max(2, EVENTS - ((i * 1000) % EVENTS)))}`));
    rows.push(await latency('list, time range, page 1', (i) => `${api}/events?limit=50&receivedFrom=${T0 + i * 60_000}&receivedTo=${T0 + i * 60_000 + 3_600_000}`));
    rows.push(await latency('event detail', (i) => `${api}/events/${1 + ((i * 104_729) % EVENTS)}`));
    printTable(rows, ['name', 'p50', 'p99', 'max']);
    console.log('(ms per request)\n');

    // Replay the newest REPLAY events through the current rules: one admin job, delivered to the sink.
    await resetSink(sink.port);
    const started = performance.now();
    const res = await request(`${api}/events/replay`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ filter: { event: 'transfer:succeeded', receivedFrom: T0 + (EVENTS - Math.round(REPLAY / 0.99)) * STEP_MS } }),
    });
    const job = await res.body.json();
    if (res.statusCode !== 202) throw new Error(`replay job refused: ${JSON.stringify(job)}`);
    console.log(`replay job accepted (events counted, job created) after ${Math.round(performance.now() - started)} ms`);
    let target = Infinity;
    let counted = { count: 0 };
    while (counted.count < target) {
      await new Promise((r) => setTimeout(r, 200));
      const state = await (await request(`${api}/jobs/${job.id}`, { headers: { authorization: `Bearer ${TOKEN}` } })).body.json();
      if (state.state === 'failed') throw new Error(`replay job failed: ${state.error}`);
      if (state.state === 'done') target = state.created;
      counted = await sinkCount(sink.port);
      if (performance.now() - started > 900_000) throw new Error('replay did not finish in 15 minutes');
    }
    var replay = { name: `replay job, ${target} events -> sink`, deliveriesPerSec: Math.round(target / ((performance.now() - started) / 1000)), seconds: ((performance.now() - started) / 1000).toFixed(1) };
  } finally {
    await stopServer(server.child);
  }
  const drain = await hookrelayDrain({ sinkPort: sink.port, rows: REPLAY, concurrency: CONCURRENCY });
  const replayRows = [drain, replay].map((row) => ({ ...row, 'vs delivery': ratio(row.deliveriesPerSec, drain.deliveriesPerSec) }));
  printTable(replayRows, ['name', 'deliveriesPerSec', 'seconds', 'vs delivery']);
  const worst = Math.max(...rows.filter((r) => r.name.startsWith('list')).map((r) => Number(r.p99)));
  console.log(`\ntargets: list p99 < 20 ms at any depth: ${worst < 20 ? 'met' : 'NOT met'} (worst ${worst} ms); replay >= 0.5x delivery: ${replay.deliveriesPerSec / drain.deliveriesPerSec >= 0.5 ? 'met' : 'NOT met'} (${ratio(replay.deliveriesPerSec, drain.deliveriesPerSec)})`);
} finally {
  await stopServer(sink.child);
  rmSync(dataDir, { recursive: true, force: true });
}
