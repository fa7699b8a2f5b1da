import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../src/samples/transfer-succeeded.js';
import Database from '../../src/sqlite-driver.js';
import { DATABASE_FILE, SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { startServeProcess, type CliProcess } from '../helpers/cli-process.js';
import { eventually, rulesDirWith } from '../helpers/rules.js';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';
import { startCountingSink, type CountingSink } from './support/counting-sink.js';
import { postWebhook } from './support/post-webhook.js';
import { report, runSeed, scale, seededRandom, sleep, timeLimit } from './support/soak.js';

// Everything here runs on 127.0.0.1: the receiver is a `hookrelay serve` child process bound to loopback,
// the rule forwards to a loopback sink in this process, and the load is bounded per cycle.

afterAll(() => removeTempDirs());

const SECRET = 'crash-safety-secret';
const CYCLES = scale(5, 200);

interface SentEvent {
  transferId: string;
  raw: Buffer;
  /** Matches the forwarding rule (card payments). */
  matches: boolean;
  /** 200 answers received for it (first copy and duplicates). */
  acks: number;
}

type ServeProcess = CliProcess & { url: string };

function serveEnv(sinkUrl: string, extraConfig = ''): Record<string, string> {
  const configFile = join(makeTempDir(), 'hookrelay.yaml');
  // A short lease, so a row leased by a killed worker falls due again quickly; the rule timeout stays below it.
  writeFileSync(
    configFile,
    [
      'durability: full',
      'delivery:',
      '  allowNetworks: [127.0.0.1/32]',
      '  leaseMs: 1500',
      '  pollIntervalMs: 50',
      'retention:',
      '  enabled: false',
      extraConfig,
    ].join('\n'),
  );
  return {
    HOOKRELAY_CONFIG: configFile,
    HOOKRELAY_DATA_DIR: makeTempDir(),
    HOOKRELAY_RULES_DIR: rulesDirWith({
      'forward.yaml': `id: forward-card\non: [transfer:succeeded]\nwhere:\n  result.paymentMethod: BUY_WITH_CARD\nto:\n  url: ${sinkUrl}\ntimeout: 1s\nretry:\n  schedule: [0s, 100ms, 200ms, 400ms, 800ms, 1s, 1s, 1s, 1s, 1s]\n`,
    }),
    HOOKRELAY_SECRET: SECRET,
  };
}

/** Posts one event; true when it was acknowledged (200). Any other answer than 200 or a dropped connection fails the run. */
async function post(url: string, event: SentEvent, agent: Agent, unexpected: string[]): Promise<boolean> {
  try {
    const { status, text } = await postWebhook(url, event.raw, SECRET, agent);
    if (status === 200) {
      event.acks += 1;
      return true;
    }
    unexpected.push(`HTTP ${status}: ${text}`);
    return false;
  } catch {
    return false; // the process was killed under this request: not acknowledged
  }
}

function newEvent(random: () => number, matches = random() < 0.6): SentEvent {
  const body = sampleTransferSucceeded({ paymentMethod: matches ? 'BUY_WITH_CARD' : 'BUY_WITH_CRYPTO' });
  return { transferId: body.result.id, raw: Buffer.from(JSON.stringify(body)), matches, acks: 0 };
}

/**
 * Bounded load: `workers` loops post new events and, one time in four, a copy of an earlier one (acknowledged
 * or not), until the process dies or `maxPosts` were sent.
 */
async function generateLoad(proc: ServeProcess, events: SentEvent[], random: () => number, options: { workers: number; maxPosts: number; unexpected: string[] }): Promise<number> {
  const agent = new Agent({ connections: options.workers });
  let sent = 0;
  let dead = false;
  void proc.exited.then(() => (dead = true));
  const worker = async (): Promise<void> => {
    while (!dead && sent < options.maxPosts) {
      sent += 1;
      let event: SentEvent;
      if (events.length > 0 && random() < 0.25) event = events[Math.floor(random() * events.length)]!;
      else events.push((event = newEvent(random)));
      await post(proc.url, event, agent, options.unexpected);
    }
  };
  await Promise.all(Array.from({ length: options.workers }, worker));
  await agent.destroy();
  return sent;
}

interface StoreCheck {
  stored: number;
  lost: string[];
  storedTwice: string[];
  notByteExact: string[];
  undercounted: string[];
  deliveries: { deliveryId: string; eventTransferId: string; state: string }[];
}

/** Opens the data dir after the last stop, as an operator would, and compares it with what was acknowledged. */
async function checkStore(dataDir: string, events: SentEvent[]): Promise<StoreCheck> {
  const store = new SqliteStore({ dataDir, durability: 'normal' });
  try {
    const rows = store.db.prepare<[string], { id: number; body: Buffer; received_count: number }>(
      "SELECT id, body, received_count FROM events WHERE source = 'checkout' AND event = 'transfer:succeeded' AND transfer_id = ?",
    );
    const check: StoreCheck = { stored: 0, lost: [], storedTwice: [], notByteExact: [], undercounted: [], deliveries: [] };
    for (const event of events) {
      if (event.acks === 0) continue;
      const found = rows.all(event.transferId);
      if (found.length === 0) check.lost.push(event.transferId);
      if (found.length > 1) check.storedTwice.push(event.transferId);
      if (found[0] && !found[0].body.equals(event.raw)) check.notByteExact.push(event.transferId);
      // Every 200 stands for a committed insert or counter bump.
      if (found[0] && found[0].received_count < event.acks) check.undercounted.push(event.transferId);
    }
    check.stored = (store.db.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n;
    check.deliveries = store.db
      .prepare<[], { id: number; transfer_id: string; state: string }>('SELECT d.id, e.transfer_id, d.state FROM deliveries d JOIN events e ON e.id = d.event_id')
      .all()
      .map((row) => ({ deliveryId: `dlv_${row.id}`, eventTransferId: row.transfer_id, state: row.state }));
    return check;
  } finally {
    await store.close();
  }
}

/** Every acknowledged matching event has exactly one delivery, it reached the sink, and every copy the sink got is the event's exact bytes. */
function checkDeliveries(events: SentEvent[], check: StoreCheck, sink: CountingSink): { missing: string[]; wrongBody: string[]; unexpectedRows: string[]; idMismatch: number } {
  const byTransfer = new Map<string, StoreCheck['deliveries']>();
  for (const delivery of check.deliveries) byTransfer.set(delivery.eventTransferId, [...(byTransfer.get(delivery.eventTransferId) ?? []), delivery]);
  const missing: string[] = [];
  const wrongBody: string[] = [];
  const unexpectedRows: string[] = [];
  const rawById = new Map<string, Buffer>();
  for (const event of events) {
    const rows = byTransfer.get(event.transferId) ?? [];
    if (!event.matches) {
      if (rows.length > 0) unexpectedRows.push(event.transferId);
      continue;
    }
    if (event.acks === 0) continue;
    if (rows.length !== 1) {
      unexpectedRows.push(`${event.transferId}: ${rows.length} deliveries`);
      continue;
    }
    const row = rows[0]!;
    rawById.set(row.deliveryId, event.raw);
    if (row.state !== 'delivered' || sink.countOf(row.deliveryId) < 1) missing.push(`${row.deliveryId} (${row.state}, seen ${sink.countOf(row.deliveryId)}x)`);
  }
  for (const got of sink.received) {
    const raw = rawById.get(got.deliveryId);
    if (raw && !got.body.equals(raw)) wrongBody.push(got.deliveryId);
  }
  const idMismatch = sink.received.filter((got) => got.webhookId !== got.deliveryId).length;
  return { missing, wrongBody, unexpectedRows, idMismatch };
}

/** Waits until the sink has received the exact bytes of every acknowledged matching event. */
async function waitForEveryMatch(sink: CountingSink, events: SentEvent[]): Promise<void> {
  const wanted = new Set(events.filter((e) => e.matches && e.acks > 0).map((e) => createHash('sha256').update(e.raw).digest('hex')));
  let scanned = 0;
  await eventually(
    () => {
      for (; scanned < sink.received.length; scanned++) wanted.delete(sink.received[scanned]!.bodySha256);
      return wanted.size === 0;
    },
    timeLimit(20_000, 180_000),
    'every acknowledged match at the sink',
  );
}

/** Waits (reading the running process's database) until no delivery is pending any more. */
async function waitUntilSettled(dataDir: string): Promise<void> {
  const db = new Database(join(dataDir, DATABASE_FILE), { readonly: true, fileMustExist: true });
  try {
    await eventually(() => (db.prepare("SELECT count(*) AS n FROM deliveries WHERE state = 'pending'").get() as { n: number }).n === 0, timeLimit(20_000, 180_000), 'no pending delivery');
  } finally {
    db.close();
  }
}

async function stop(proc: ServeProcess, signal: NodeJS.Signals): Promise<void> {
  if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill(signal);
  await proc.exited;
}

describe('crash safety: hookrelay serve killed with SIGKILL at random moments', () => {
  it(
    `stores every acknowledged event exactly once and delivers every match at least once (${CYCLES} kill cycles)`,
    async () => {
      const seed = runSeed();
      const random = seededRandom(seed);
      // The sink answers after 0-40 ms, so some kills land while attempts are in flight.
      const sink = await startCountingSink({ delayMs: () => Math.floor(random() * 40) });
      const env = serveEnv(sink.url);
      const events: SentEvent[] = [];
      const unexpected: string[] = [];
      let posts = 0;
      try {
        for (let cycle = 0; cycle < CYCLES; cycle++) {
          const proc = await startServeProcess(env);
          const load = generateLoad(proc, events, random, { workers: 8, maxPosts: 400, unexpected });
          await sleep(Math.floor(random() * 400));
          await stop(proc, 'SIGKILL');
          posts += await load;
        }
        // One last run without a kill lets the worker finish what the crashes left behind.
        const final = await startServeProcess(env);
        await waitForEveryMatch(sink, events);
        await waitUntilSettled(env.HOOKRELAY_DATA_DIR!);
        await stop(final, 'SIGTERM');
        expect(final.child.exitCode).toBe(0);

        const check = await checkStore(env.HOOKRELAY_DATA_DIR!, events);
        const delivered = checkDeliveries(events, check, sink);
        const acknowledged = events.filter((e) => e.acks > 0).length;
        const duplicates = sink.duplicates();
        report('crash-safety/ingest+delivery', {
          seed, cycles: CYCLES, posts, acknowledged, stored: check.stored, lost: check.lost.length,
          deliveries: check.deliveries.length, duplicateDeliveries: duplicates.extraRequests,
        });
        expect(unexpected).toEqual([]);
        expect(acknowledged).toBeGreaterThan(CYCLES);
        expect(check.lost).toEqual([]);
        expect(check.storedTwice).toEqual([]);
        expect(check.notByteExact).toEqual([]);
        expect(check.undercounted).toEqual([]);
        expect(delivered.unexpectedRows).toEqual([]);
        expect(delivered.missing).toEqual([]);
        expect(delivered.wrongBody).toEqual([]);
        expect(delivered.idMismatch).toBe(0);
      } finally {
        await sink.close();
      }
    },
    timeLimit(90_000, 1_800_000),
  );

  it(
    `re-delivers with the same delivery id when the worker is killed mid-attempt (${CYCLES} kill cycles)`,
    async () => {
      const seed = runSeed();
      const random = seededRandom(seed);
      // Answers take 300 ms, so the worker always has attempts in flight to be killed in.
      const sink = await startCountingSink({ delayMs: () => 300 });
      const env = serveEnv(sink.url);
      const events: SentEvent[] = [];
      const unexpected: string[] = [];
      // Delivery id -> how many times an attempt of it was in flight when the process was killed.
      const killedMidAttempt = new Map<string, number>();
      const agent = new Agent();
      try {
        for (let cycle = 0; cycle < CYCLES; cycle++) {
          const proc = await startServeProcess(env);
          // New work every cycle, acknowledged before the kill.
          for (let i = 0; i < 3; i++) {
            const event = newEvent(random, true);
            events.push(event);
            expect(await post(proc.url, event, agent, unexpected)).toBe(true);
          }
          await eventually(() => sink.inFlight().length > 0, 10_000, 'an attempt in flight');
          await sleep(Math.floor(random() * 150));
          const inFlight = sink.inFlight();
          await stop(proc, 'SIGKILL');
          for (const id of inFlight) killedMidAttempt.set(id, (killedMidAttempt.get(id) ?? 0) + 1);
        }
        const final = await startServeProcess(env);
        await waitForEveryMatch(sink, events);
        await waitUntilSettled(env.HOOKRELAY_DATA_DIR!);
        await stop(final, 'SIGTERM');

        const check = await checkStore(env.HOOKRELAY_DATA_DIR!, events);
        const delivered = checkDeliveries(events, check, sink);
        const duplicates = sink.duplicates();
        // Each attempt cut off by a kill was made again: one request more than the kills it went through.
        const notRepeated = [...killedMidAttempt].filter(([id, kills]) => sink.countOf(id) < kills + 1).map(([id, kills]) => `${id}: killed ${kills}x, seen ${sink.countOf(id)}x`);
        const attemptsKilled = [...killedMidAttempt.values()].reduce((a, b) => a + b, 0);
        report('crash-safety/worker-killed-mid-attempt', {
          seed, cycles: CYCLES, acknowledged: events.length, stored: check.stored, lost: check.lost.length,
          attemptsKilled, deliveriesKilledMidAttempt: killedMidAttempt.size, duplicateDeliveries: duplicates.extraRequests,
        });
        expect(unexpected).toEqual([]);
        expect(check.lost).toEqual([]);
        expect(attemptsKilled).toBeGreaterThanOrEqual(CYCLES);
        expect(duplicates.extraRequests).toBeGreaterThanOrEqual(attemptsKilled);
        // An attempt cut off by the kill is made again, under the same delivery id.
        expect(notRepeated).toEqual([]);
        expect(delivered.missing).toEqual([]);
        expect(delivered.wrongBody).toEqual([]);
        expect(delivered.unexpectedRows).toEqual([]);
        expect(delivered.idMismatch).toBe(0);
      } finally {
        await agent.destroy();
        await sink.close();
      }
    },
    timeLimit(90_000, 1_800_000),
  );
});
