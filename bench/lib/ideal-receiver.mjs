// The practical limit of a durable webhook receiver in plain Node, as a benchmark baseline:
// `node ideal-receiver.mjs <cli.js> <data dir>`. It does the acknowledging work hookrelay does and nothing
// else: node:http, read the body (1 MiB cap), HMAC-SHA256 verify with timingSafeEqual, JSON.parse, the
// same zod schema hookrelay validates with, one row per event into better-sqlite3 with hookrelay's own
// SQLite schema (its migrations, so the same columns, unique key and indexes), WAL, and a group commit of
// one event-loop turn's requests followed by an fdatasync of the WAL before any of them is answered.
// No rules, logging, metrics or routing. Prints {"port": N} once listening.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { fdatasync, openSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';

const [cli, dataDir] = process.argv.slice(2);
const dist = dirname(cli);
const { KNOWN_EVENT_SCHEMAS, EventEnvelopeSchema } = await import(join(dist, 'ingest/event-schemas.js'));
// The SQLite driver hookrelay itself loads for this Node.js (src/sqlite-driver.ts).
const { default: Database } = await import(join(dist, 'sqlite-driver.js'));
const secret = process.env.HOOKRELAY_SECRET ?? 'bench-secret';
const MAX_BYTES = 1024 * 1024;

const db = new Database(join(dataDir, 'ideal.db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
const migrations = join(dist, 'store/sqlite/migrations');
for (const file of readdirSync(migrations).filter((f) => f.endsWith('.sql')).sort()) db.exec(readFileSync(join(migrations, file), 'utf8'));
const insert = db.prepare(`
  INSERT INTO events (source, event, transfer_id, checkout_id, email, wallet_address, total_price_usd, validation,
                      received_at, last_received_at, headers, body)
  VALUES ('checkout', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (transfer_id, source, event, edit_number) DO NOTHING`);
const saveBatch = db.transaction((rows) => rows.map((r) => insert.run(...r).changes === 1));
const walFd = openSync(join(dataDir, 'ideal.db-wal'), 'r');

let queue = [];
let scheduled = false;
let syncing = false;
function commitTurn() {
  scheduled = false;
  if (syncing || queue.length === 0) return;
  const batch = queue;
  queue = [];
  const stored = saveBatch(batch.map((b) => b.row));
  syncing = true;
  fdatasync(walFd, (err) => {
    syncing = false;
    batch.forEach((b, i) => (err ? answer(b.res, 503, '{"error":"store"}') : answer(b.res, 200, stored[i] ? '{"ok":true}' : '{"ok":true,"duplicate":true}')));
    if (queue.length > 0) commitTurn();
  });
}

function answer(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function verified(signature, body) {
  const expected = createHmac('sha256', secret).update(body).digest();
  const given = Buffer.from(typeof signature === 'string' ? signature.replace(/^sha256=/, '') : '', 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const text = (v) => (typeof v === 'string' && v.length > 0 ? v : null);

const server = createServer((req, res) => {
  const chunks = [];
  let size = 0;
  req.on('data', (c) => {
    size += c.length;
    if (size > MAX_BYTES) req.destroy();
    else chunks.push(c);
  });
  req.on('end', () => {
    const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    if (!verified(req.headers['x-service-signature'], body)) return answer(res, 401, '{"error":"signature"}');
    let parsed;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      return answer(res, 400, '{"error":"json"}');
    }
    const envelope = EventEnvelopeSchema.safeParse(parsed);
    if (!envelope.success) return answer(res, 422, '{"error":"envelope"}');
    const schema = KNOWN_EVENT_SCHEMAS[parsed.event];
    if (schema && !schema.safeParse(parsed).success) return answer(res, 422, '{"error":"schema"}');
    const r = parsed.result;
    const now = Date.now();
    const headers = JSON.stringify({ 'content-type': req.headers['content-type'], 'x-service-signature': req.headers['x-service-signature'] });
    const amount = typeof r.totalPriceUsd === 'number' && Number.isFinite(r.totalPriceUsd) ? r.totalPriceUsd : null;
    queue.push({ res, row: [parsed.event, r.id, text(r.checkoutId), text(r.email), text(r.walletAddress), amount, schema ? 'valid' : 'unrecognised', now, now, headers, body] });
    if (!scheduled) {
      scheduled = true;
      setImmediate(commitTurn);
    }
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
