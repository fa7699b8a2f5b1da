// A loopback sink for the fixed-rate delivery case, run as a child process: answers 200 to every POST after
// `delayMs` (argv[2]) and notes when each event arrived (epoch ms, sub-millisecond), keyed by the number
// transfer id `fa57fa57-0000-4000-8000-<n in hex>`. GET /arrivals returns them as [n, ms] pairs; GET /count the number so far;
// DELETE /arrivals forgets them.
// Prints {"port": N} once listening.
import { createServer } from 'node:http';

const delayMs = Number(process.argv[2] ?? 0);
const ID = /fa57fa57-0000-4000-8000-([0-9a-f]{12})/;
let arrivals = [];
const now = () => performance.timeOrigin + performance.now();

const server = createServer((req, res) => {
  if (req.method === 'DELETE') {
    arrivals = []; // a warm-up's arrivals are not measured
    res.writeHead(204).end();
    return;
  }
  if (req.method === 'GET') {
    const body = req.url === '/arrivals' ? JSON.stringify(arrivals) : JSON.stringify({ count: arrivals.length });
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    return;
  }
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const at = now();
    const match = ID.exec(Buffer.concat(chunks).toString('latin1'));
    if (match) arrivals.push([parseInt(match[1], 16), at]);
    const answer = () => res.writeHead(200, { 'content-type': 'application/json', 'content-length': 2 }).end('{}');
    if (delayMs > 0) setTimeout(answer, delayMs);
    else answer();
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`));
process.on('SIGTERM', () => process.exit(0));
