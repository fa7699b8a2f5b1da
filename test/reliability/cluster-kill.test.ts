import { createHash } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../src/samples/transfer-succeeded.js';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../helpers/postgres.js';
import { eventually } from '../helpers/rules.js';
import { removeTempDirs } from '../helpers/temp-dir.js';
import { Cluster, clusterEnv, type SentEvent } from './support/cluster.js';
import { startCountingSink } from './support/counting-sink.js';
import { report, runSeed, scale, seededRandom, sleep, timeLimit } from './support/soak.js';

// Several `hookrelay serve` child processes on one PostgreSQL database, all on 127.0.0.1; the rule forwards to
// a loopback sink in this process. RELIABILITY_CLUSTER_NODES and RELIABILITY_CLUSTER_CYCLES change the size
// of a run (`npm run soak -- cluster-kill --nodes=5 --cycles=300`); RELIABILITY_SEED repeats one.

const SECRET = 'cluster-kill-secret';
const TOKEN = 'cluster-kill-admin-token-0123456789';
const NODES = Number(process.env.RELIABILITY_CLUSTER_NODES || 3);
const CYCLES = Number(process.env.RELIABILITY_CLUSTER_CYCLES || scale(4, 60));
const SENDERS = 4;
if (!(NODES >= 2)) throw new Error(`RELIABILITY_CLUSTER_NODES=${process.env.RELIABILITY_CLUSTER_NODES}: at least 2 nodes, so one is up while another is killed`);

let database: TestDatabase;
afterAll(() => removeTempDirs());

interface EventItem {
  id: number;
  transferId: string;
}
interface EventWithDeliveries {
  event: { id: number; bodyBase64: string; receivedCount: number };
  deliveries: { id: number; state: string }[];
}

function newEvent(random: () => number): SentEvent {
  const matches = random() < 0.6;
  const body = sampleTransferSucceeded({ paymentMethod: matches ? 'BUY_WITH_CARD' : 'BUY_WITH_CRYPTO' });
  return { transferId: body.result.id, raw: Buffer.from(JSON.stringify(body)), matches, acks: 0, ids: new Set() };
}

/** Deliveries by state, lease and due time (ms from the database's now): what a failed wait reports. */
function outboxSummary(db: TestDatabase): Promise<unknown[]> {
  return db.query(
    `SELECT state, attempts, lease_token IS NOT NULL AS leased, last_status, last_error, count(*)::int AS n,
            max(next_attempt_at - (extract(epoch FROM clock_timestamp()) * 1000)::bigint)::int AS latest_due_in_ms
     FROM deliveries GROUP BY 1, 2, 3, 4, 5 ORDER BY n DESC LIMIT 20`,
  );
}

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

describeWithPostgres(`several nodes on one PostgreSQL, one killed with SIGKILL at random moments`, () => {
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it(
    `stores every acknowledged event once and delivers every match under one delivery id (${NODES} nodes, ${CYCLES} kills)`,
    async () => {
      const seed = runSeed();
      // One generator for the kills and one for the load, so the kill schedule does not depend on how many
      // requests happened to be sent in between.
      const killRandom = seededRandom(seed);
      const random = seededRandom(seed + 1);
      console.log(`[reliability] cluster-kill: seed=${seed} (repeat with RELIABILITY_SEED=${seed})`);
      // The sink answers after 0-40 ms, so some kills land while attempts are in flight.
      const sink = await startCountingSink({ delayMs: () => Math.floor(random() * 40) });
      const cluster = new Cluster(clusterEnv({ databaseUrl: database.url, sinkUrl: sink.url, secret: SECRET, adminToken: TOKEN }), NODES, SECRET);
      const events: SentEvent[] = [];
      const unexpected: string[] = [];
      let posts = 0;
      try {
        // Nodes that start at the same moment take turns on the migrations.
        await Promise.all(cluster.slots.map((_, slot) => cluster.start(slot)));

        // Senders: mostly new events, some repeats of earlier ones (acknowledged or not), and some new events
        // posted to two nodes at the same instant.
        let sending = true;
        const sender = async (): Promise<void> => {
          while (sending) {
            posts += 1;
            const roll = random();
            if (events.length > 0 && roll < 0.15) {
              await cluster.post(events[Math.floor(random() * events.length)]!, unexpected);
            } else if (roll < 0.25) {
              const event = newEvent(random);
              events.push(event);
              const first = Math.floor(random() * NODES);
              await Promise.all([cluster.post(event, unexpected, first), cluster.post(event, unexpected, first + 1)]);
            } else {
              const event = newEvent(random);
              events.push(event);
              await cluster.post(event, unexpected);
            }
            await sleep(2 + Math.floor(random() * 12));
          }
        };
        const senders = Array.from({ length: SENDERS }, sender);

        // Each kill hits a random live node (one always stays up to take the traffic); it starts again in the
        // background, on a new port, while the next kills go on.
        const restarts: Promise<unknown>[] = [];
        for (let kills = 0; kills < CYCLES; ) {
          await sleep(300 + Math.floor(killRandom() * 900));
          const live = cluster.slots.flatMap((node, slot) => (node ? [slot] : []));
          if (live.length < 2) continue;
          const slot = live[Math.floor(killRandom() * live.length)]!;
          await cluster.kill(slot);
          kills += 1;
          const restart = sleep(Math.floor(killRandom() * 300)).then(() => cluster.start(slot));
          restart.catch(() => {}); // reported by Promise.all below
          restarts.push(restart);
        }
        await Promise.all(restarts);
        sending = false;
        await Promise.all(senders);

        const acknowledged = events.filter((e) => e.acks > 0);
        expect(unexpected).toEqual([]);
        expect(acknowledged.length).toBeGreaterThan(CYCLES * 10);

        // Every acknowledged match reaches the sink (the leases of the killed nodes' claims end within 1.5 s),
        // then nothing is left pending.
        const wanted = new Set(acknowledged.filter((e) => e.matches).map((e) => sha256(e.raw)));
        let scanned = 0;
        await eventually(
          () => {
            for (; scanned < sink.received.length; scanned++) wanted.delete(sink.received[scanned]!.bodySha256);
            return wanted.size === 0;
          },
          timeLimit(60_000, 300_000),
          'every acknowledged match at the sink',
        ).catch(async (err: Error) => {
          throw new Error(`${err.message}: ${wanted.size} missing; the outbox: ${JSON.stringify(await outboxSummary(database))}`);
        });
        await eventually(async () => (await cluster.admin<{ items: unknown[] }>('/deliveries?state=pending&limit=10', TOKEN)).items.length === 0, timeLimit(20_000, 120_000), 'no pending delivery');

        // What the cluster stored, read through the admin API: every event, page by page.
        const stored = new Map<string, EventItem[]>();
        let cursor: string | null = null;
        do {
          const page: { items: EventItem[]; nextCursor: string | null } = await cluster.admin(`/events?limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, TOKEN);
          for (const item of page.items) stored.set(item.transferId, [...(stored.get(item.transferId) ?? []), item]);
          cursor = page.nextCursor;
        } while (cursor);

        const sent = new Set(events.map((e) => e.transferId));
        const problems: string[] = [...stored.keys()].filter((t) => !sent.has(t)).map((t) => `${t}: stored but never sent`);
        const deliveryOf = new Map<string, number>();
        let next = 0;
        const check = async (): Promise<void> => {
          while (next < acknowledged.length) {
            const event = acknowledged[next++]!;
            const rows = stored.get(event.transferId) ?? [];
            if (rows.length !== 1) {
              problems.push(`${event.transferId}: stored ${rows.length} times`);
              continue;
            }
            const id = rows[0]!.id;
            if (event.ids.size !== 1 || !event.ids.has(id)) problems.push(`${event.transferId}: answered ids ${[...event.ids]}, stored ${id}`);
            const detail = await cluster.admin<EventWithDeliveries>(`/events/${id}`, TOKEN);
            if (!Buffer.from(detail.event.bodyBase64, 'base64').equals(event.raw)) problems.push(`${event.transferId}: bytes differ`);
            if (detail.event.receivedCount < event.acks) problems.push(`${event.transferId}: receivedCount ${detail.event.receivedCount} < ${event.acks} acks`);
            const expected = event.matches ? 1 : 0;
            if (detail.deliveries.length !== expected) problems.push(`${event.transferId}: ${detail.deliveries.length} deliveries, expected ${expected}`);
            const delivery = detail.deliveries[0];
            if (event.matches && delivery) {
              if (delivery.state !== 'delivered') problems.push(`dlv_${delivery.id}: ${delivery.state}`);
              deliveryOf.set(sha256(event.raw), delivery.id);
            }
          }
        };
        await Promise.all(Array.from({ length: 8 }, check));

        // At the sink: each match under its one delivery id (every attempt, including those cut off by a kill),
        // with the event's exact bytes, and webhook-id equal to the delivery id.
        const sentBodies = new Set(events.map((e) => sha256(e.raw)));
        const idsPerBody = new Map<string, Set<string>>();
        for (const got of sink.received) {
          if (!sentBodies.has(got.bodySha256)) problems.push(`sink got ${got.deliveryId}: bytes of no sent event`);
          if (got.webhookId !== got.deliveryId) problems.push(`sink got ${got.deliveryId} with webhook-id ${got.webhookId}`);
          idsPerBody.set(got.bodySha256, (idsPerBody.get(got.bodySha256) ?? new Set()).add(got.deliveryId));
        }
        for (const [body, ids] of idsPerBody) {
          const id = deliveryOf.get(body);
          // An event sent but never acknowledged may have been stored and forwarded: under one id all the same.
          if (ids.size !== 1 || (id !== undefined && !ids.has(`dlv_${id}`))) problems.push(`one event at the sink under ${[...ids]}${id === undefined ? '' : `, stored as dlv_${id}`}`);
        }
        for (const id of deliveryOf.values()) if (sink.countOf(`dlv_${id}`) < 1) problems.push(`dlv_${id} never reached the sink`);

        report('cluster-kill', {
          seed, nodes: NODES, kills: CYCLES, posts, events: events.length, acknowledged: acknowledged.length,
          stored: stored.size, deliveries: deliveryOf.size, sinkRequests: sink.received.length, duplicateDeliveries: sink.duplicates().extraRequests, problems: problems.length,
        });
        expect(problems.slice(0, 20)).toEqual([]);
      } finally {
        const exits = await cluster.stop();
        await sink.close();
        expect(exits.every((code) => code === 0)).toBe(true);
      }
    },
    // About 30 s on an idle 2-core machine; a node's start takes many seconds when the machine is busy.
    timeLimit(400_000, 3_600_000),
  );
});
