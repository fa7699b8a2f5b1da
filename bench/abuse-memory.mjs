// npm run bench:abuse-memory — what unauthenticated clients can make a receiver hold.
// N connections (BENCH_ABUSE_CONNECTIONS, default 500) each declare a 1 MiB body, send all of it but the
// last byte, and hold the connection open; then they all go. Printed: the server's RSS (and its anonymous
// part) before, while they hold, and 5 s after they went; its peak RSS; the buffered-bytes gauge while
// they hold and after; V8's heap and external memory (from /metrics, no GC forced); and how the clients
// were answered. Loopback only, bounded in time (each phase
// waits at most 20 s). With BENCH_BASE set to another built checkout, it runs there too, for a before/after.
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { readServePort } from './lib/drain.mjs';
import { BENCH_ADMIN_TOKEN, peakRssMb, printTable, startFreshServe } from './lib/run.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const CONNECTIONS = Number(process.env.BENCH_ABUSE_CONNECTIONS ?? 500);
const DECLARED = 1024 * 1024;
const PHASE_MS = 20_000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const memoryOf = (pid) => {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(text)?.[1] ?? 0);
  return { rss: Math.round(kb('VmRSS') / 1024), anon: Math.round(kb('RssAnon') / 1024) };
};

/** From /metrics, in MiB: the buffered-bytes gauge, and the V8 heap used and external memory (no GC forced). */
async function gauges(port) {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${BENCH_ADMIN_TOKEN}` } });
  const text = await response.text();
  const mib = (name) => {
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return line ? Math.round(Number(line.split(' ')[1]) / 1048576) : 'n/a';
  };
  return { buffered: mib('hookrelay_ingest_buffered_bytes'), heap: mib('nodejs_heap_size_used_bytes'), external: mib('nodejs_external_memory_bytes') };
}

/** One client: head and all but the last byte of a 1 MiB body, then it holds. */
function holdingClient(port, body, tally) {
  const socket = net.connect(port, '127.0.0.1');
  let answer = '';
  let settle;
  const sent = new Promise((resolve) => (settle = resolve));
  socket.on('error', () => undefined);
  socket.on('data', (chunk) => {
    if (answer.length < 12) answer += chunk.toString('latin1');
  });
  socket.on('close', () => {
    tally[answer.slice(9, 12) || 'closed, no answer'] = (tally[answer.slice(9, 12) || 'closed, no answer'] ?? 0) + 1;
    settle();
  });
  socket.write(`POST /webhooks/checkout HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Service-Signature: 00\r\nContent-Length: ${DECLARED}\r\n\r\n`);
  socket.write(body, () => settle());
  return { socket, sent };
}

async function attack(checkout) {
  const server = await startFreshServe(checkout, readServePort);
  const pid = server.child.pid;
  try {
    await sleep(2000);
    const before = memoryOf(pid);
    const gaugesBefore = await gauges(server.port);
    const body = Buffer.alloc(DECLARED - 1, 0x20);
    const tally = {};
    const clients = [];
    for (let i = 0; i < CONNECTIONS; i++) {
      clients.push(holdingClient(server.port, body, tally));
      if (i % 50 === 49) await sleep(10);
    }
    await Promise.race([Promise.all(clients.map((c) => c.sent)), sleep(PHASE_MS)]);
    await sleep(1000);
    const holding = memoryOf(pid);
    const gaugesHolding = await gauges(server.port);
    for (const { socket } of clients) socket.destroy();
    await sleep(5000);
    const after = memoryOf(pid);
    const gaugesAfter = await gauges(server.port);
    return {
      'RSS before MB': before.rss,
      'RSS holding MB': holding.rss,
      'RSS peak MB': Math.round(peakRssMb(pid)),
      'RSS 5 s after MB': after.rss,
      'RssAnon holding / after MB': `${holding.anon} / ${after.anon}`,
      'buffered MiB holding / after': `${gaugesHolding.buffered} / ${gaugesAfter.buffered}`,
      'heap + external MiB before / holding / after': [gaugesBefore, gaugesHolding, gaugesAfter].map((g) => `${g.heap}+${g.external}`).join(' / '),
      answers: Object.entries(tally).map(([k, v]) => `${k}: ${v}`).join(', ') || 'none yet',
    };
  } finally {
    await server.stop();
  }
}

const checkouts = [['this checkout', root], ...(process.env.BENCH_BASE ? [['BENCH_BASE', process.env.BENCH_BASE]] : [])];
const rows = [];
for (const [name, dir] of checkouts) rows.push({ checkout: name, ...(await attack(dir)) });
console.log(`${CONNECTIONS} connections, each declaring 1 MiB and sending 1,048,575 bytes, then holding:`);
printTable(rows, Object.keys(rows[0]));
