// bench:stream — what open event streams cost ingest, and how soon an acknowledged event reaches them.
//
// One `hookrelay serve` (fresh data dir, durability full, no rules). Its maximum ingest rate is measured
// first (50 connections, closed loop); then, in alternating rounds, ingest at half that rate open loop
// (lib/fixed-rate.mjs) with no stream open, and with STREAM_CLIENTS SSE clients following
// GET /admin/api/events/stream. Ack p99 is compared as the median over rounds of the per-round ratio.
// During the rounds with clients, a probe posts one more event every 50 ms and notes when its answer came;
// every client notes when each event id arrived: ack→stream is arrival minus acknowledgement, per client
// (both on the machine's clock). The clients run in a process of their own, apart from the load generator.
// All traffic goes to 127.0.0.1; every case is bounded in count and time.
import { createHmac, randomUUID } from 'node:crypto';
import { fork } from 'node:child_process';
import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fixedRateLoad, rawPost } from './lib/fixed-rate.mjs';
import { BENCH_ADMIN_TOKEN, cpuMs, cpuUsPer, formatRatio, load, median, printTable, serveCommand, startServer, stopServer } from './lib/run.mjs';

const SECRET = 'bench-secret';
const CONNECTIONS = 50;
const STREAM_CLIENTS = Number(process.env.BENCH_STREAM_CLIENTS ?? 50);
const DURATION = Number(process.env.BENCH_DURATION ?? 4);
// Many short rounds: a neighbour's burst spoils a round or two, and the median of the per-round ratios leaves them out.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const CLIENTS_NICE = Number(process.env.BENCH_STREAM_CLIENTS_NICE ?? 0);
// A query for the clients' streams, e.g. `source=nobody`: streams that read on every wake but are sent nothing.
const STREAM_QUERY = process.env.BENCH_STREAM_QUERY ?? '';
const PROBE_MS = 50;
const root = fileURLToPath(new URL('..', import.meta.url));
// BENCH_CLI: another build's dist/cli.js, to compare two versions under the same harness.
const cli = process.env.BENCH_CLI ?? join(root, 'dist/cli.js');

const template = JSON.stringify({
  event: 'transfer:succeeded',
  result: {
    id: '00000000-0000-4000-8000-000000000000', checkoutId: '7f3c2a9e-1b4d-4c8e-9f6a-2d5e8b1c0a47', walletAddress: '0x8ba1f109551bd432803012645ac136ddd64dba72',
    walletType: 'EMBEDDED', email: 'buyer.name@example.com', quantity: 2, paymentMethod: 'BUY_WITH_CARD', networkFeeUsd: 0.02, totalPriceUsd: 49.02,
    createdAt: '2026-11-22T14:19:22.123+00:00', paymentCompletedAt: '2026-11-22T14:19:24.273+00:00', transferCompletedAt: '2026-11-22T14:19:33.693+00:00',
    claimedTokens: { tokenIds: ['4711', '4712'], transactionHashes: { '0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060': ['4711', '4712'] } },
  },
});

/** The probe's events carry this email, so the clients find them without parsing every message. */
const PROBE_EMAIL = 'stream-probe@bench.invalid';

function signedBody(email) {
  let body = template.replace('00000000-0000-4000-8000-000000000000', randomUUID());
  if (email) body = body.replace('buyer.name@example.com', email);
  return { body, headers: { 'content-type': 'application/json', 'x-service-signature': createHmac('sha256', SECRET).update(body).digest('hex') } };
}

const rawRequests = (count) => Array.from({ length: count }, () => {
  const { body, headers } = signedBody();
  return rawPost('/webhooks/checkout', headers, body);
});

/** STREAM_CLIENTS SSE clients in a child process (bench/lib/stream-clients.mjs); resolves once all are open. */
async function openStreams(port) {
  const child = fork(join(root, 'bench/lib/stream-clients.mjs'), [String(port), String(STREAM_CLIENTS), BENCH_ADMIN_TOKEN, PROBE_EMAIL, STREAM_QUERY], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  // Real clients run on other machines; a nice value makes this one take only the CPU the server leaves.
  if (CLIENTS_NICE !== 0) setPriority(child.pid, CLIENTS_NICE);
  await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`stream clients exited with ${code}`)));
  });
  return {
    pid: child.pid,
    /** Stops the clients; resolves with, per client, event id → arrival (epoch ms). */
    stop: () => new Promise((resolve) => {
      child.removeAllListeners('exit');
      child.once('message', (message) => resolve(message.arrivals));
      child.send('stop');
    }),
  };
}

/** Posts one event every PROBE_MS until stopped; resolves with [event id, acknowledged at]. */
function probe(port) {
  const acks = [];
  let stopped = false;
  const once = () => new Promise((resolve) => {
    const { body, headers } = signedBody(PROBE_EMAIL);
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/webhooks/checkout', headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => {
        const at = performance.timeOrigin + performance.now();
        try {
          acks.push([String(JSON.parse(text).id), at]);
        } catch {
          // not an acknowledgement: left out
        }
        resolve();
      });
    });
    req.on('error', () => resolve());
    req.end(body);
  });
  const done = (async () => {
    while (!stopped) {
      const next = new Promise((resolve) => setTimeout(resolve, PROBE_MS));
      await once();
      await next;
    }
    return acks;
  })();
  return { stop: () => { stopped = true; return done; } };
}

/** Open loop at `rate`; `cpuUs`: the server's CPU per request (all its threads), steadier than latency when neighbours take the cores. */
async function ingestAtHalf(port, rate, pid, clientsPid) {
  await fixedRateLoad({ port, rate, seconds: 1, connections: CONNECTIONS, requests: rawRequests(rate) }); // warm-up at the same rate
  const before = cpuMs(pid);
  const clientsBefore = clientsPid === undefined ? 0 : cpuMs(clientsPid);
  const result = await fixedRateLoad({ port, rate, seconds: DURATION, connections: CONNECTIONS, requests: rawRequests(rate * DURATION) });
  return {
    p50: result.p50, p99: result.p99, failed: result.failed, rps: Math.round(result.ok / result.seconds), cpuUs: cpuUsPer(pid, before, result.sent),
    // The clients' process shares the cores with the server here; elsewhere it would not.
    clientsCpuUs: clientsPid === undefined ? 0 : cpuUsPer(clientsPid, clientsBefore, result.sent),
  };
}

const round1 = (value) => Math.round(value * 10) / 10;

const percentile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] * 10) / 10 : NaN;
};

const dataDir = mkdtempSync(join(tmpdir(), 'hookrelay-bench-stream-'));
const env = { HOOKRELAY_PORT: '0', HOOKRELAY_HOST: '127.0.0.1', HOOKRELAY_DATA_DIR: dataDir, HOOKRELAY_RULES_DIR: join(dataDir, 'rules'), HOOKRELAY_SECRET: SECRET, HOOKRELAY_DURABILITY: 'full', HOOKRELAY_LOG_LEVEL: 'warn' };
const readPort = (line) => line.includes('"hookrelay listening"') && Number(new URL(JSON.parse(line).url).port);
const server = await startServer(process.execPath, serveCommand(cli), { env: { ...env, HOOKRELAY_LOG_LEVEL: 'info' }, readPort });
try {
  const { port } = server;
  const signedRequest = { method: 'POST', path: '/webhooks/checkout', setupRequest(req) { const { body, headers } = signedBody(); req.body = body; req.headers = headers; return req; } };
  await load({ url: `http://127.0.0.1:${port}`, connections: CONNECTIONS, duration: 2, requests: [signedRequest] });
  const max = await load({ url: `http://127.0.0.1:${port}`, connections: CONNECTIONS, duration: DURATION, requests: [signedRequest] });
  const maxRps = Math.round(max['2xx'] / max.duration);
  const half = Math.max(50, Math.round(maxRps / 2));
  console.log(`bench:stream — max ingest ${maxRps} rps (50 connections, closed loop); cases at ${half} rps open loop, ${DURATION}s each, ${ROUNDS} rounds, ${STREAM_CLIENTS} stream clients (nice ${CLIENTS_NICE}), node ${process.version}\n`);

  const without = [];
  const withClients = [];
  const ackToStream = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    // Alternate which case goes first: the second of a pair tends to win.
    const order = round % 2 === 0 ? ['without', 'with'] : ['with', 'without'];
    for (const which of order) {
      if (which === 'without') {
        without.push(await ingestAtHalf(port, half, server.child.pid));
        continue;
      }
      const streams = await openStreams(port);
      const probes = probe(port);
      withClients.push(await ingestAtHalf(port, half, server.child.pid, streams.pid));
      const acks = await probes.stop();
      await new Promise((resolve) => setTimeout(resolve, 1_000)); // the last probes reach the streams
      const clients = await streams.stop();
      for (const [id, ackedAt] of acks) for (const arrivals of clients) if (arrivals[id] !== undefined) ackToStream.push(arrivals[id] - ackedAt);
      const missing = acks.reduce((sum, [id]) => sum + clients.filter((arrivals) => arrivals[id] === undefined).length, 0);
      if (missing > 0) console.log(`round ${round + 1}: ${missing} probe arrivals missing`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  const row = (name, results) => ({
    name, rps: Math.round(median(results.map((r) => r.rps))), p50: round1(median(results.map((r) => r.p50))), p99: round1(median(results.map((r) => r.p99))),
    'p99 range': `${Math.min(...results.map((r) => r.p99))}–${Math.max(...results.map((r) => r.p99))}`, cpuUs: median(results.map((r) => r.cpuUs)),
    'clients cpuUs': median(results.map((r) => r.clientsCpuUs)),
    failed: results.reduce((s, r) => s + r.failed, 0),
  });
  printTable([row('ingest, no stream open', without), row(`ingest, ${STREAM_CLIENTS} streams open`, withClients)], ['name', 'rps', 'p50', 'p99', 'p99 range', 'cpuUs', 'clients cpuUs', 'failed']);
  const ratio = median(withClients.map((w, i) => w.p99 / without[i].p99));
  console.log(`\nack p99 with ${STREAM_CLIENTS} streams / without (median of per-round ratios): ${formatRatio(ratio)}`);
  console.log(`server CPU per request with ${STREAM_CLIENTS} streams / without: ${formatRatio(median(withClients.map((w, i) => w.cpuUs / without[i].cpuUs)))}`);
  console.log(`ack→stream message (ms, ${ackToStream.length} arrivals of ${ackToStream.length / STREAM_CLIENTS} probes): p50 ${percentile(ackToStream, 0.5)}  p99 ${percentile(ackToStream, 0.99)}  max ${percentile(ackToStream, 1)}`);
} finally {
  await stopServer(server.child);
  rmSync(dataDir, { recursive: true, force: true });
}
