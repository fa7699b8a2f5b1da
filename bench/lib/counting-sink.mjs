// A loopback sink for delivery benchmarks, run as a child process: answers 200 to every POST (after
// argv[2] ms, default at once) and counts them; GET /count returns the count and the times of the first
// and last arrival since the last GET /reset. Prints {"port": N} once listening.
import { createServer } from 'node:http';

const delayMs = Number(process.argv[2] ?? 0);
let count = 0;
let first = 0;
let last = 0;
const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/count') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ count, first, last }));
    return;
  }
  if (req.method === 'GET' && req.url === '/reset') {
    count = first = last = 0;
    res.writeHead(200).end();
    return;
  }
  req.resume();
  req.on('end', () => {
    count += 1;
    last = performance.now();
    if (count === 1) first = last;
    const answer = () => res.writeHead(200, { 'content-type': 'application/json', 'content-length': 2 }).end('{}');
    if (delayMs > 0) setTimeout(answer, delayMs);
    else answer();
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`));
process.on('SIGTERM', () => process.exit(0));
