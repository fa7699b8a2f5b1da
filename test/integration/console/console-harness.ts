import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { send, type Reply } from '../../helpers/http.js';
import { startTestReceiver, type TestReceiver } from '../../helpers/receiver.js';
import { makeTempDir } from '../../helpers/temp-dir.js';

export const ADMIN_TOKEN = 'console-test-admin-token-0123456789abcdef';

export interface RuleSpec {
  id: string;
  url: string;
  description?: string;
  /** Extra YAML lines (where:, transform:, retry:, …). */
  extra?: string;
}

export function ruleYaml({ id, url, description = `Forwards ${id} events to a local sink`, extra = '' }: RuleSpec): string {
  return `id: ${id}\ndescription: ${description}\non: [transfer:succeeded]\nto:\n  url: ${url}\n${extra}`;
}

/** A real receiver with the console and admin API, rules forwarding to local sinks, loopback allowed. */
export async function startConsoleReceiver(rules: RuleSpec[]): Promise<TestReceiver & { rulesDir: string }> {
  const rulesDir = makeTempDir('hookrelay-console-rules-');
  for (const rule of rules) writeFileSync(join(rulesDir, `${rule.id}.yaml`), ruleYaml(rule));
  const receiver = await startTestReceiver({
    rulesDir,
    admin: { token: ADMIN_TOKEN },
    // The console tests retry deliveries to a sink that is down on purpose: a circuit that opened on its
    // dead letters would hold those retries for the whole cool-down.
    delivery: { allowNetworks: ['127.0.0.1/32'], pollIntervalMs: 100, failureThreshold: 1_000 },
  });
  return { ...receiver, rulesDir };
}

export interface ConsoleCookies {
  session: string;
  csrf: string;
  /** `Cookie` header value carrying both. */
  header: string;
}

/** The name=value of each Set-Cookie line, with its attributes, keyed by cookie name. */
export function setCookies(reply: Reply): Map<string, { value: string; attributes: string[] }> {
  const raw = reply.headers['set-cookie'];
  const lines = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  const cookies = new Map<string, { value: string; attributes: string[] }>();
  for (const line of lines) {
    const [pair, ...attributes] = line.split(';').map((part) => part.trim());
    const separator = pair!.indexOf('=');
    cookies.set(pair!.slice(0, separator), { value: pair!.slice(separator + 1), attributes });
  }
  return cookies;
}

/** Logs in through POST /console/login (JSON) and returns the cookies the console would hold. */
export async function logIn(url: string): Promise<ConsoleCookies> {
  const reply = await send(`${url}/console/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: ADMIN_TOKEN }) });
  if (reply.status !== 200) throw new Error(`log-in failed: ${reply.status} ${reply.text}`);
  const cookies = setCookies(reply);
  const session = cookies.get('hookrelay_session')!.value;
  const csrf = cookies.get('hookrelay_csrf')!.value;
  return { session, csrf, header: `hookrelay_session=${session}; hookrelay_csrf=${csrf}` };
}
