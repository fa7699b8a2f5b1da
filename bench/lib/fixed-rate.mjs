// Open-loop load at a fixed rate: requests start on an even schedule whatever the server answers, over a
// pool of keep-alive connections, and each latency counts from the moment the request was due, not from
// when a free connection sent it (no coordinated omission). autocannon's own rate option sends each
// second's quota as one burst at the top of the second, which measures a saturated server half the time
// instead of a half-loaded one.
//
// The client is deliberately thin (raw sockets, requests built before the clock starts) so that on a small
// machine it takes as little CPU as possible from the server it measures.
import { connect } from 'node:net';

const HEADER_END = Buffer.from('\r\n\r\n');

/**
 * One keep-alive HTTP/1.1 connection that sends one request at a time. `onResponse(conn, status)` for each
 * answer; `onClose(conn)` when the socket ends (a server's idle timeout, or a failure mid-request).
 */
function openConnection(port, onResponse, onClose) {
  const socket = connect({ port, host: '127.0.0.1', noDelay: true });
  let buffered = Buffer.alloc(0);
  const conn = { socket, busy: false, index: -1, ready: new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject)) };
  socket.on('data', (chunk) => {
    buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
    for (;;) {
      const end = buffered.indexOf(HEADER_END);
      if (end < 0) return;
      const head = buffered.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
      const total = end + 4 + length;
      if (buffered.length < total) return;
      const status = Number(head.slice(9, 12));
      buffered = buffered.subarray(total);
      conn.busy = false;
      onResponse(conn, status);
    }
  });
  socket.on('error', () => {}); // reported through 'close'
  socket.on('close', () => onClose(conn));
  return conn;
}

/**
 * @param {{ port: number, rate: number, seconds: number, connections: number, requests: Buffer[] }} options
 *   `requests`: complete HTTP/1.1 requests (keep-alive), one per send, built before the run.
 */
export async function fixedRateLoad({ port, rate, seconds, connections, requests }) {
  const total = Math.min(requests.length, Math.round(rate * seconds));
  const latencies = new Float64Array(total);
  let ok = 0;
  let failed = 0;
  let answered = 0;
  let sent = 0;
  const waiting = []; // indexes due but not yet sent (every connection busy)
  // Idle connections, least recently used first: every connection keeps being used, so none sits idle
  // long enough for the server's keep-alive timeout to close it under the client.
  const idle = [];
  let started = 0;
  let finish;
  const finished = new Promise((resolve) => (finish = resolve));

  const send = (conn, index) => {
    conn.busy = true;
    conn.index = index;
    conn.socket.write(requests[index]);
  };
  const settle = (conn, status) => {
    latencies[conn.index] = performance.now() - (started + (conn.index * 1000) / rate);
    if (status >= 200 && status < 300) ok += 1;
    else failed += 1;
    answered += 1;
    if (answered === total) finish();
  };
  const release = (conn) => {
    if (waiting.length) send(conn, waiting.shift());
    else idle.push(conn);
  };
  const onResponse = (conn, status) => {
    settle(conn, status);
    release(conn);
  };
  // A closed connection fails the request it carried (if any) and is replaced by a fresh one.
  const onClose = (conn) => {
    const at = idle.indexOf(conn);
    if (at >= 0) idle.splice(at, 1);
    if (conn.busy) {
      conn.busy = false;
      settle(conn, 0);
    }
    if (answered === total) return;
    const fresh = openConnection(port, onResponse, onClose);
    fresh.ready.then(() => release(fresh), () => {});
  };
  const pool = Array.from({ length: connections }, () => openConnection(port, onResponse, onClose));
  await Promise.all(pool.map((c) => c.ready));
  idle.push(...pool);

  started = performance.now();
  const tick = () => {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate) + 1);
    while (sent < due) {
      const conn = idle.shift();
      if (conn) send(conn, sent);
      else waiting.push(sent);
      sent += 1;
    }
    if (sent < total) setTimeout(tick, 1);
  };
  tick();
  await finished;
  const elapsed = (performance.now() - started) / 1000;
  for (const conn of [...pool, ...idle]) conn.socket.destroy();
  const sorted = Array.from(latencies).sort((a, b) => a - b);
  const at = (q) => Math.round(sorted[Math.min(total - 1, Math.floor(q * total))] * 10) / 10;
  // startedAt: when request 0 was due (epoch ms); request i was due 1000 * i / rate ms later.
  return { startedAt: performance.timeOrigin + started, sent: total, ok, failed, seconds: elapsed, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: Math.round(sorted[total - 1] * 10) / 10, slowest: slowestBySlot(latencies, rate) };
}

/**
 * The slowest latency (ms, rounded) in each 100 ms slot of the schedule where one went over 8 ms: whether a
 * tail is spread evenly (queueing) or comes in bursts at a period (a background task stalling the server).
 */
function slowestBySlot(latencies, rate) {
  const slots = {};
  latencies.forEach((latency, index) => {
    if (latency <= 8) return;
    const slot = (Math.floor((index / rate) * 10) / 10).toFixed(1);
    slots[slot] = Math.max(slots[slot] ?? 0, Math.round(latency));
  });
  return slots;
}

/** A keep-alive POST as raw bytes. */
export function rawPost(path, headers, body) {
  const lines = [`POST ${path} HTTP/1.1`, 'host: 127.0.0.1', `content-length: ${Buffer.byteLength(body)}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${body}`);
}
