// One measurement of `npm run bench:store`, in a process of its own:
//   node store-child.mjs <checkout> commit <per commit> <events> <durability>
//   node store-child.mjs <checkout> learn <events>
// `commit`: saves events through that checkout's SqliteStore, `per commit` at once (each batch one group
// commit). `learn`: stores the events first, then times the schema learner working them off in passes of up
// to 1 s (its default passes are 5 ms, each followed by a pause). Prints {"cpuUs": …} per event, this
// process's CPU (every thread: the checkpoint thread too).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [checkout, mode, ...args] = process.argv.slice(2);
const dist = join(checkout, 'dist');
const { SqliteStore } = await import(join(dist, 'store/sqlite/sqlite-store.js'));
const { sampleTransferSucceeded } = await import(join(dist, 'samples/transfer-succeeded.js'));
const dataDir = mkdtempSync(join(tmpdir(), 'hookrelay-bench-store-'));
const store = new SqliteStore({ dataDir, durability: mode === 'commit' ? args[2] : 'normal' });

function spec() {
  const body = sampleTransferSucceeded();
  return { body, raw: Buffer.from(JSON.stringify(body)) };
}
const save = ({ body, raw }) =>
  store.saveEvent({ source: 'checkout', event: body.event, transferId: body.result.id, checkoutId: body.result.checkoutId, email: body.result.email, walletAddress: body.result.walletAddress, validation: 'valid', receivedAt: Date.now(), headers: { 'content-type': 'application/json' }, body: raw, ruleSetHash: null, deliveries: [] });
async function saveAll(bodies, perCommit) {
  for (let i = 0; i < bodies.length; i += perCommit) await Promise.all(bodies.slice(i, i + perCommit).map(save));
}

/** CPU µs per event of `work`. */
async function timed(events, work) {
  const before = process.cpuUsage();
  await work();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / events;
}

async function commitCase(perCommit, events) {
  await saveAll(Array.from({ length: 1_000 }, spec), perCommit); // warm-up
  const bodies = Array.from({ length: events }, spec);
  return timed(events, () => saveAll(bodies, perCommit));
}

async function learnCase(events) {
  const [{ SchemaLearner }, { ConfigSchema }, { default: pino }] = await Promise.all([import(join(dist, 'schema/schema-learner.js')), import(join(dist, 'config.js')), import('pino')]);
  const settings = { ...ConfigSchema.parse({}).schema, maxPassMs: 1_000 };
  const learner = new SchemaLearner({ store, settings, logger: pino({ level: 'silent' }), leaseHolder: 'bench' });
  await learner.runOnce(); // starts at the newest event: learns what is stored from now on
  await saveAll(Array.from({ length: events }, spec), 100);
  let learned = 0;
  const cpuUs = await timed(events, async () => {
    for (;;) {
      const report = await learner.runOnce();
      learned += report.learned;
      if (!report.behind) return;
    }
  });
  await learner.stop();
  if (learned !== events) throw new Error(`learned ${learned} of ${events} events`);
  return cpuUs;
}

try {
  const cpuUs = mode === 'commit' ? await commitCase(Number(args[0]), Number(args[1])) : await learnCase(Number(args[0]));
  process.stdout.write(`${JSON.stringify({ cpuUs })}\n`);
} finally {
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
}
