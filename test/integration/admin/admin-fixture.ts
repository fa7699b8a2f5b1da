import type { Config } from '../../../src/config.js';
import { sampleTransferSucceeded, type SampleTransferOptions } from '../../../src/samples/transfer-succeeded.js';
import type { TestBackend } from '../../helpers/backends.js';
import { postSigned, send, type Reply } from '../../helpers/http.js';
import { startTestReceiver, TEST_SECRET, type TestReceiver } from '../../helpers/receiver.js';
import { rulesDirWith, TEST_DELIVERY } from '../../helpers/rules.js';
import { startWebhookSink, type SinkReply, type WebhookSink } from '../../helpers/webhook-sink.js';

/** Everything a test started, closed in reverse order after it. */
const running: { close(): Promise<void> }[] = [];

export async function closeAll(): Promise<void> {
  for (const item of running.splice(0).reverse()) await item.close();
}

export interface AdminFixture {
  app: TestReceiver;
  rulesDir: string;
  token: string;
  /** Calls /admin/api<path> with the admin token (or the given headers instead). */
  api(path: string, options?: { method?: string; body?: unknown; headers?: Record<string, string> }): Promise<Reply>;
  /** Posts a signed transfer:succeeded (or the given body) to the receiver; resolves with the event id. */
  ingest(body?: unknown): Promise<number>;
  transfer(options?: SampleTransferOptions): ReturnType<typeof sampleTransferSucceeded>;
}

export interface FixtureOptions {
  rules?: Record<string, string>;
  delivery?: Record<string, unknown>;
  overrides?: Partial<Record<keyof Config, unknown>>;
}

export async function startAdminFixture(options: FixtureOptions = {}): Promise<AdminFixture> {
  const rulesDir = rulesDirWith(options.rules ?? {});
  const app = await startTestReceiver({
    rulesDir,
    delivery: { ...TEST_DELIVERY, ...options.delivery },
    ...options.overrides,
  });
  running.push(app);
  const token = app.adminToken;
  return {
    app,
    rulesDir,
    token,
    api: (path, { method = 'GET', body, headers } = {}) =>
      send(`${app.url}/admin/api${path}`, {
        method,
        headers: headers ?? { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
        ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      }),
    async ingest(body = sampleTransferSucceeded()) {
      const reply = await postSigned(app.webhookUrl(), body, TEST_SECRET);
      if (reply.status !== 200) throw new Error(`ingest answered ${reply.status}: ${reply.text}`);
      return reply.json.id as number;
    },
    transfer: (transferOptions) => sampleTransferSucceeded(transferOptions),
  };
}

/** `startAdminFixture` on a backend's fresh storage (see describeEachBackend). */
export function fixtureOn(backend: TestBackend): typeof startAdminFixture {
  return async (options = {}) => startAdminFixture({ ...options, overrides: { ...(await backend.storage()), ...options.overrides } });
}

export async function startSink(reply?: (index: number) => SinkReply): Promise<WebhookSink> {
  const sink = await startWebhookSink(reply);
  running.unshift(sink); // closed after the receivers
  return sink;
}

/** A rule file: `on` transfer:succeeded, to `url`, plus extra YAML lines. */
export const ruleYaml = (id: string, url: string, extra = ''): string => `id: ${id}\non: [transfer:succeeded]\nto:\n  url: ${url}\n${extra}`;
