// Baseline servers for benchmarks, run as a child process: `node baseline-server.mjs node-http|express|express-stack`.
// Prints {"port": N} once listening. They read the whole body and answer 200, nothing else. `express-stack`
// is express hello that has also loaded, without using them, the libraries of hookrelay's fixed stack: the
// memory any receiver built on that stack starts from.
import { createServer } from 'node:http';
import express from 'express';

const kind = process.argv[2];
if (kind === 'express-stack') await Promise.all(['raw-body', 'zod', 'better-sqlite3', 'p-retry', 'pino'].map((name) => import(name)));
let handler;
if (kind === 'node-http') {
  handler = (req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = '{"ok":true}';
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
      res.end(body);
    });
  };
} else if (kind === 'express' || kind === 'express-stack') {
  const app = express();
  app.post('/webhooks/:source', express.raw({ type: 'application/json', limit: '1mb' }), (req, res) => res.json({ ok: true, bytes: req.body.length }));
  handler = app;
} else {
  throw new Error(`unknown baseline ${kind}`);
}
const server = createServer(handler);
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
