import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { SqliteStore } from '../../../../src/store/sqlite/sqlite-store.js';
import type { EventSummary, StoredEvent } from '../../../../src/store/event-store.js';
import type { Delivery } from '../../../../src/store/outbox-store.js';
import { runCli, type CliProcess } from '../../../helpers/cli-process.js';
import { TEST_DELIVERY, rulesDirWith } from '../../../helpers/rules.js';
import { makeTempDir } from '../../../helpers/temp-dir.js';
import { startWebhookSink, type WebhookSink } from '../../../helpers/webhook-sink.js';
import { SAMPLE_CHECKOUT } from '../../../helpers/sample-checkout.js';

/** Secret of hookrelay's `checkout` source; the mock signs with it (set on each checkout). */
export const SOURCE_SECRET = 'whsec_checkout_flow_e2e';
/** Secret hookrelay signs forwarded requests with (rules reference it as `${RULE_SECRET}`). */
export const RULE_SECRET = 'rule-signing-secret-e2e';
/** Header the rules put hookrelay's signature in, so it cannot be confused with the mock's. */
export const RULE_SIGNATURE_HEADER = 'x-hookrelay-signature';
export const MOCK_API_KEY = 'mock-e2e-api-key-0123456789';

export { SAMPLE_CHECKOUT };

/** A rule forwarding `transfer:succeeded` untransformed to `url`, signed hex HMAC with RULE_SECRET. */
export function forwardingRule(id: string, url: string, where?: string): string {
  return [
    `id: ${id}`,
    'on: [transfer:succeeded]',
    'source: checkout',
    ...(where ? ['where:', ...where.split('\n').map((line) => `  ${line}`)] : []),
    'to:',
    `  url: ${url}`,
    'sign:',
    '  scheme: hmac-sha256-hex',
    '  secret: "${RULE_SECRET}"',
    `  header: ${RULE_SIGNATURE_HEADER}`,
    '',
  ].join('\n');
}

interface Running {
  proc: CliProcess;
}

const running: Running[] = [];

/** Stops one child process: SIGTERM, then SIGKILL if it has not exited after `graceMs`. */
async function stopProcess({ proc }: Running, graceMs = 10_000): Promise<void> {
  const { child } = proc;
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await proc.exited;
  clearTimeout(timer);
}

/** For afterEach/afterAll: stops every process started here that is still running, and closes every sink, even after a failure. */
export async function stopAllProcesses(): Promise<void> {
  await Promise.all(running.splice(0).map((r) => stopProcess(r)));
  await Promise.all(sinks.splice(0).map((sink) => sink.close()));
}

export interface Receiver {
  url: string;
  dataDir: string;
  proc: CliProcess;
  /** Graceful stop (SIGTERM); resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** `hookrelay serve` on an ephemeral loopback port, with its own data dir and the given rule files. */
export async function startReceiver(rules: Record<string, string>): Promise<Receiver> {
  const dataDir = makeTempDir('hookrelay-flow-data-');
  const configFile = join(makeTempDir('hookrelay-flow-config-'), 'hookrelay.yaml');
  writeFileSync(
    configFile,
    `delivery:\n  allowNetworks: [${TEST_DELIVERY.allowNetworks.join(', ')}]\n  pollIntervalMs: ${TEST_DELIVERY.pollIntervalMs}\n`,
  );
  // As startServeProcess does, but registered for cleanup before waiting, so a failed start is stopped too.
  const proc = runCli(['serve'], {
    env: {
      HOOKRELAY_HOST: '127.0.0.1',
      HOOKRELAY_PORT: '0',
      HOOKRELAY_CONFIG: configFile,
      HOOKRELAY_DATA_DIR: dataDir,
      HOOKRELAY_RULES_DIR: rulesDirWith(rules),
      HOOKRELAY_SECRET: SOURCE_SECRET,
      RULE_SECRET,
    },
  });
  const entry = { proc };
  running.push(entry);
  const listening = await proc.waitForLog((line) => line.msg === 'hookrelay listening');
  return {
    url: listening.url as string,
    dataDir,
    proc,
    async stop() {
      await stopProcess(entry);
      running.splice(running.indexOf(entry), 1);
      return (await proc.exited).code;
    },
  };
}

export interface MockCheckoutProcess {
  url: string;
  proc: CliProcess;
  /** JSON call to the mock with the bearer key. */
  call(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }>;
  createCheckout(receiverUrl: string, extra?: Record<string, unknown>): Promise<{ checkoutUrl: string; id: string }>;
  deliveries(checkoutId: string): Promise<MockDelivery[]>;
  transfers(checkoutId: string): Promise<{ id: string; checkoutId: string; paymentMethod: string }[]>;
  stop(): Promise<number | null>;
}

export interface MockDelivery {
  id: string;
  checkoutId: string;
  transferId: string;
  event: string;
  kind: string;
  url: string;
  signature: string;
  status: number | null;
  ok: boolean;
  error: string | null;
  attempts: number;
  body: string;
}

/** `hookrelay mock-checkout --port 0` with a fixed API key; the URL is read from its first output line. */
export async function startMockCheckout(): Promise<MockCheckoutProcess> {
  const proc = runCli(['mock-checkout', '--port', '0', '--host', '127.0.0.1', '--api-key', MOCK_API_KEY]);
  const entry = { proc };
  running.push(entry);
  const deadline = Date.now() + 15_000;
  let url: string | undefined;
  while (!(url = /^Mock checkout listening on (http:\/\/\S+)$/m.exec(proc.stdout())?.[1])) {
    if (proc.child.exitCode !== null || Date.now() > deadline) {
      throw new Error(`mock-checkout did not start; stdout:\n${proc.stdout()}\nstderr:\n${proc.stderr()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const base = url;

  async function call(method: string, path: string, body?: unknown) {
    const headers: Record<string, string> = { authorization: `Bearer ${MOCK_API_KEY}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    return { status: response.status, json: text ? JSON.parse(text) : undefined };
  }

  return {
    url: base,
    proc,
    call,
    async createCheckout(receiverUrl, extra = {}) {
      const created = await call('POST', '/api/v1/checkout', {
        ...SAMPLE_CHECKOUT,
        webhookUrls: [`${receiverUrl}/webhooks/checkout`],
        webhookSecret: SOURCE_SECRET,
        ...extra,
      });
      expect(created.status, JSON.stringify(created.json)).toBe(200);
      return { checkoutUrl: created.json.checkoutUrl as string, id: created.json.result.id as string };
    },
    async deliveries(checkoutId) {
      const reply = await call('GET', `/mock/checkout/${checkoutId}/deliveries`);
      expect(reply.status).toBe(200);
      return reply.json.result as MockDelivery[];
    },
    async transfers(checkoutId) {
      const reply = await call('GET', `/mock/checkout/${checkoutId}/transfers`);
      expect(reply.status).toBe(200);
      return reply.json.result;
    },
    async stop() {
      await stopProcess(entry);
      running.splice(running.indexOf(entry), 1);
      return (await proc.exited).code;
    },
  };
}

const sinks: WebhookSink[] = [];

/** A capturing sink that `stopAllProcesses` closes; `sinkRequests(sink, '/all')` picks the requests one rule sent to `${sink.url}/all`. */
export async function startSink(): Promise<WebhookSink> {
  const sink = await startWebhookSink();
  sinks.push(sink);
  return sink;
}
export type { WebhookSink };
export function sinkRequests(sink: WebhookSink, suffix: string) {
  return sink.received.filter((r) => r.path === `/hooks${suffix}`);
}

export interface StoreSnapshot {
  events: EventSummary[];
  deliveries: Delivery[];
  getEvent(id: number): StoredEvent;
}

/** Reads everything hookrelay stored in `dataDir` (call after the receiver has stopped). */
export async function readStore(dataDir: string): Promise<StoreSnapshot> {
  const store = new SqliteStore({ dataDir, durability: 'normal' });
  try {
    const events = (await store.listEvents({}, { limit: 100_000 })).items;
    const deliveries = (await store.listDeliveries({}, { limit: 100_000 })).items;
    const full = new Map<number, StoredEvent>();
    for (const summary of events) full.set(summary.id, (await store.getEvent(summary.id))!);
    return {
      events,
      deliveries,
      getEvent: (id) => {
        const event = full.get(id);
        if (!event) throw new Error(`no stored event ${id}`);
        return event;
      },
    };
  } finally {
    await store.close();
  }
}

/** Runs `task` over `items` with at most `limit` in flight. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]!, index);
    }
  });
  await Promise.all(workers);
  return results;
}

/**
 * Like Promise.all, but waits for every promise to settle before throwing the first failure, so
 * whatever did start (a browser, a process) is registered for cleanup before afterEach runs.
 */
export async function allSettledOrThrow<T extends readonly unknown[]>(promises: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as unknown as T;
}
