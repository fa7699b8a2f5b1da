// One measurement of `npm run bench:commit`, in a process of its own: `node commit-child.mjs <checkout> <per commit> <events> <durability>`.
// Saves events through that checkout's SqliteStore, `per commit` at once (each batch one group commit), and
// prints {"cpuUs": …, "userUs": …} per event, this process's CPU (every thread: the checkpoint thread too).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [checkout, perCommitArg, eventsArg, durability] = process.argv.slice(2);
const perCommit = Number(perCommitArg);
const events = Number(eventsArg);
const dist = join(checkout, 'dist');
const { SqliteStore } = await import(join(dist, 'store/sqlite/sqlite-store.js'));
const { sampleTransferSucceeded } = await import(join(dist, 'samples/transfer-succeeded.js'));
const dataDir = mkdtempSync(join(tmpdir(), 'hookrelay-bench-commit-'));
const store = new SqliteStore({ dataDir, durability });
const warmUp = 1_000;
const bodies = Array.from({ length: warmUp + events }, () => {
  const body = sampleTransferSucceeded();
  return { body, raw: Buffer.from(JSON.stringify(body)) };
});
const save = ({ body, raw }) =>
  store.saveEvent({ source: 'checkout', event: body.event, transferId: body.result.id, checkoutId: body.result.checkoutId, email: body.result.email, walletAddress: body.result.walletAddress, validation: 'valid', receivedAt: Date.now(), headers: { 'content-type': 'application/json' }, body: raw, ruleSetHash: null, deliveries: [] });
async function saveAll(from, to) {
  for (let i = from; i < to; i += perCommit) await Promise.all(bodies.slice(i, Math.min(to, i + perCommit)).map(save));
}
try {
  await saveAll(0, warmUp);
  const before = process.cpuUsage();
  await saveAll(warmUp, warmUp + events);
  const used = process.cpuUsage(before);
  process.stdout.write(`${JSON.stringify({ cpuUs: (used.user + used.system) / events, userUs: used.user / events })}\n`);
} finally {
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
}
