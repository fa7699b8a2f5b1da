import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, startServeProcess, type CliProcess } from '../../helpers/cli-process.js';
import { postSigned } from '../../helpers/http.js';
import { makeTempDir } from '../../helpers/temp-dir.js';

export const SECRET = 'cli-events-secret';
export const ADMIN_TOKEN = 'cli-events-admin-token-0123456789';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  json: any;
}

/** Runs `hookrelay <args>` as a child process to the end. */
export async function hookrelay(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const proc = runCli(args, { env });
  const { code } = await proc.exited;
  let json: unknown;
  try {
    json = JSON.parse(proc.stdout());
  } catch {
    json = undefined;
  }
  return { code, stdout: proc.stdout(), stderr: proc.stderr(), json };
}

export interface ServerUnderTest {
  url: string;
  dataDir: string;
  rulesDir: string;
  env: Record<string, string>;
  process: CliProcess;
  webhook: string;
  stop(): Promise<void>;
}

/** `hookrelay serve` on an ephemeral port with a fresh data dir, loopback destinations allowed, a known admin token. */
export async function startServer(rules: Record<string, string> = {}): Promise<ServerUnderTest> {
  const dataDir = makeTempDir();
  const rulesDir = makeTempDir('hookrelay-rules-');
  for (const [name, text] of Object.entries(rules)) writeFileSync(join(rulesDir, name), text);
  const env = {
    HOOKRELAY_DATA_DIR: dataDir,
    HOOKRELAY_RULES_DIR: rulesDir,
    HOOKRELAY_SECRET: SECRET,
    HOOKRELAY_ALLOW_NETWORKS: '127.0.0.1/32',
    HOOKRELAY_ADMIN_TOKEN: ADMIN_TOKEN,
    HOOKRELAY_LOG_LEVEL: 'warn',
  };
  const proc = await startServeProcess({ ...env, HOOKRELAY_LOG_LEVEL: 'info' });
  return {
    url: proc.url,
    dataDir,
    rulesDir,
    env,
    process: proc,
    webhook: `${proc.url}/webhooks/checkout`,
    async stop() {
      proc.child.kill('SIGTERM');
      await proc.exited;
    },
  };
}

/** Raw bodies with the details a re-serialisation would lose: spacing, key order, escapes, non-ASCII. */
export function awkwardBodies(count: number): Buffer[] {
  return Array.from({ length: count }, (_, i) =>
    Buffer.from(`{ "result" : {"note":"caf\u00e9 \\u00e9 \u{1F600}\\n", "id":"${randomUUID()}" ,"n": ${i}.50},\n  "event":"order:noted${i % 2}" }  `),
  );
}

export async function postAll(url: string, bodies: (Buffer | object)[]): Promise<number[]> {
  const ids: number[] = [];
  for (const body of bodies) {
    const reply = await postSigned(url, body, SECRET);
    if (reply.status !== 200) throw new Error(`ingest answered ${reply.status}: ${reply.text}`);
    ids.push(reply.json.id);
  }
  return ids;
}

/** Until `check` holds (polling), or fail after `timeoutMs`. */
export async function until<T>(check: () => T | Promise<T>, timeoutMs = 10_000, what = 'condition'): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
