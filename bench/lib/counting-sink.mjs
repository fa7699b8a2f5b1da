// A loopback sink for delivery benchmarks, run as a child process: answers 200 to every POST and counts
// them; GET /count returns the count. Prints {"port": N} once listening.
import { createServer } from 'node:http';

let count = 0;
const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/count') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ count }));
    return;
  }
  req.resume();
  req.on('end', () => {
    count += 1;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': 2 }).end('{}');
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`));
process.on('SIGTERM', () => process.exit(0));
