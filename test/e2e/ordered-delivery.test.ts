import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../src/samples/transfer-succeeded.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { startServeProcess, type CliProcess } from '../helpers/cli-process.js';
import { postSigned } from '../helpers/http.js';
import { eventually, rulesDirWith } from '../helpers/rules.js';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';
import { startWebhookSink, type ReceivedWebhook } from '../helpers/webhook-sink.js';

afterAll(() => removeTempDirs());

/** Eight checkouts (valid ids, as the event schema wants them). */
const KEYS = Array.from({ length: 8 }, () => String(sampleTransferSucceeded().result.checkoutId));
const PER_KEY = 6;
/** The key whose head the sink refuses for a while. */
const FAILING_KEY = KEYS[0]!;
const FAILURES = 6;

const transferOf = (request: ReceivedWebhook): { id: string; checkoutId: string } => JSON.parse(request.rawBody.toString()).result;

describe('ordered delivery per key, served by a process killed with SIGKILL halfway', () => {
  it('delivers each key strictly in received order, one attempt at a time, while a failing head blocks only its own key', async () => {
    const inFlight = new Map<string, number>();
    let overlaps = 0;
    let failuresLeft = FAILURES;
    const answered: { checkoutId: string; id: string; status: number; at: number }[] = [];
    const sink = await startWebhookSink((_i, request) => {
      const { checkoutId, id } = transferOf(request);
      const running = (inFlight.get(checkoutId) ?? 0) + 1;
      if (running > 1) overlaps += 1;
      inFlight.set(checkoutId, running);
      // Answered after a moment, so attempts of different keys overlap (concurrency > 1) and of one key could.
      setTimeout(() => inFlight.set(checkoutId, (inFlight.get(checkoutId) ?? 1) - 1), 25);
      const fail = checkoutId === FAILING_KEY && failuresLeft > 0;
      if (fail) failuresLeft -= 1;
      const status = fail ? 503 : 200;
      answered.push({ checkoutId, id, status, at: Date.now() });
      return { status, delayMs: 25 };
    });
    const dataDir = makeTempDir();
    const configFile = join(makeTempDir(), 'hookrelay.yaml');
    // The failing head's refusals must not open the sink's circuit: that would pause every key for the
    // cool-down, which is the breaker's job, not what this test is about.
    writeFileSync(configFile, 'delivery:\n  allowNetworks: [127.0.0.1/32]\n  leaseMs: 1500\n  pollIntervalMs: 50\n  failureThreshold: 1000\n');
    const rule = [
      'id: ordered', 'on: [transfer:succeeded]', `to:\n  url: ${sink.url}`, 'timeout: 2s', 'order:\n  key: result.checkoutId',
      "retry:\n  schedule: ['0s', '150ms', '150ms', '150ms', '150ms', '150ms', '150ms', '150ms', '150ms', '150ms']", '',
    ].join('\n');
    const env = { HOOKRELAY_CONFIG: configFile, HOOKRELAY_DATA_DIR: dataDir, HOOKRELAY_RULES_DIR: rulesDirWith({ 'ordered.yaml': rule }), HOOKRELAY_SECRET: 's' };
    // Events interleaved over the keys; each key's received order is the order its events are posted in.
    const bodies = Array.from({ length: PER_KEY }, () => KEYS.map((checkoutId) => sampleTransferSucceeded({ checkoutId }))).flat();
    const postedOrder = new Map(KEYS.map((key) => [key, bodies.filter((b) => b.result.checkoutId === key).map((b) => b.result.id)]));
    const half = bodies.length / 2;
    const servers: CliProcess[] = [];
    try {
      const first = await startServeProcess(env);
      servers.push(first);
      for (const body of bodies.slice(0, half)) await postSigned(`${first.url}/webhooks/checkout`, body, 's');
      await sink.waitFor(half / 2, 10_000); // deliveries are under way
      first.child.kill('SIGKILL');
      await first.exited;

      const second = await startServeProcess(env);
      servers.push(second);
      for (const body of bodies.slice(half)) await postSigned(`${second.url}/webhooks/checkout`, body, 's');
      const store = new SqliteStore({ dataDir, durability: 'normal' });
      try {
        await eventually(async () => (await store.outboxStats()).pending === 0, 30_000, 'every delivery settled');
        expect((await store.listDeliveries({ state: 'dead' }, { limit: 10 })).items).toEqual([]);
      } finally {
        await store.close();
      }
      second.child.kill('SIGTERM');
      await second.exited;

      expect(overlaps).toBe(0);
      for (const key of KEYS) {
        // At-least-once: a crash may repeat the attempt it interrupted, never go back past it.
        const positions = answered.filter((a) => a.checkoutId === key).map((a) => postedOrder.get(key)!.indexOf(a.id));
        expect(positions.every((p, i) => i === 0 || p >= positions[i - 1]!), `${key}: ${positions.join(',')}`).toBe(true);
        const delivered = answered.filter((a) => a.checkoutId === key && a.status === 200).map((a) => a.id);
        expect([...new Set(delivered)]).toEqual(postedOrder.get(key));
      }
      // While the failing key's head was refused, the other keys kept flowing.
      const failures = answered.filter((a) => a.status === 503);
      expect(failures).toHaveLength(FAILURES);
      const blockedFrom = failures[0]!.at;
      const blockedUntil = failures.at(-1)!.at;
      expect(answered.filter((a) => a.checkoutId !== FAILING_KEY && a.at > blockedFrom && a.at < blockedUntil).length).toBeGreaterThan(0);
      expect(answered.filter((a) => a.checkoutId === FAILING_KEY && a.at > blockedFrom && a.at < blockedUntil).every((a) => a.status === 503)).toBe(true);
    } finally {
      for (const server of servers) if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL'); // a failed run leaves none behind
      await sink.close();
    }
  }, 90_000);
});
