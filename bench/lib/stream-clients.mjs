// SSE clients of bench:stream, in a process of their own so that reading 50 streams does not slow the
// load generator: opens `count` streams on GET /admin/api/events/stream, says "ready" once all are open,
// and on "stop" sends back, per client, when each probe event arrived (epoch ms, sub-millisecond).
// Every byte of every stream is read; only the probe's events (found by their marker, bytes only) are
// parsed, so the clients cost little CPU beside the server they measure.
import { connect } from 'node:net';

const [port, count, token, marker, query = ''] = [Number(process.argv[2]), Number(process.argv[3]), process.argv[4], process.argv[5], process.argv[6]];
const markerBytes = Buffer.from(marker);
const READY = Buffer.from('event: ready');
const OK = Buffer.from('HTTP/1.1 200');
/** Bytes of the previous chunk kept, so a message split between two chunks is still found whole. */
const KEEP = 4096;
const now = () => performance.timeOrigin + performance.now();

/** The id of each message in `text` that holds the marker. */
function markedIds(text) {
  const ids = [];
  for (let at = text.indexOf(marker); at !== -1; at = text.indexOf(marker, at + 1)) {
    const start = text.lastIndexOf('\nid: ', at);
    const match = start === -1 ? null : /^\nid: (\d+)\n/.exec(text.slice(start, start + 32));
    if (match) ids.push(match[1]);
  }
  return ids;
}

const clients = Array.from({ length: count }, () => {
  const arrivals = {};
  let previous = Buffer.alloc(0);
  let socket;
  const opened = new Promise((resolve, reject) => {
    // A plain socket, no HTTP parser: the stream's chunk framing only ever falls between whole messages
    // (the server writes whole messages), so the bytes are searched as they come.
    socket = connect(port, '127.0.0.1', () => {
      socket.write(`GET /admin/api/events/stream${query ? `?${query}` : ''} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nauthorization: Bearer ${token}\r\naccept: text/event-stream\r\n\r\n`);
    });
    let answered = false;
    socket.on('data', (chunk) => {
      const at = now();
      if (!answered) {
        answered = true;
        if (!chunk.subarray(0, 12).equals(OK)) reject(new Error(`stream refused: ${chunk.toString('utf8').split('\r\n')[0]}`));
      }
      if (chunk.includes(READY)) resolve();
      // The chunk alone, and the seam with the previous one's end: no copy of every chunk.
      const seam = Buffer.concat([previous.subarray(previous.length - markerBytes.length), chunk.subarray(0, markerBytes.length)]);
      if (chunk.includes(markerBytes) || seam.includes(markerBytes)) {
        for (const id of markedIds('\n' + Buffer.concat([previous, chunk]).toString('utf8'))) arrivals[id] ??= at;
      }
      previous = Buffer.from(chunk.subarray(Math.max(0, chunk.length - KEEP)));
    });
    socket.on('error', reject);
  });
  return { opened, arrivals, close: () => socket.destroy() };
});
await Promise.all(clients.map((c) => c.opened));
process.send('ready');
process.on('message', (message) => {
  if (message !== 'stop') return;
  for (const client of clients) client.close();
  process.send({ arrivals: clients.map((c) => c.arrivals) }, () => process.exit(0));
});
