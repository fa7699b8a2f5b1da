import { Option, type Command } from 'commander';
import pRetry, { AbortError } from 'p-retry';
import { request } from 'undici';
import { loadConfig, type Config } from '../config.js';
import { HookrelayError } from '../errors.js';
import { SIGNATURE_SCHEMES, type Signing, type SignatureScheme } from '../signing/scheme.js';
import { newMessageId, signatureHeaders } from '../signing/sign.js';
import { sourceSecretFor } from './secrets.js';
import { findServer } from './command-target.js';
import { noServerFound, type RunningServer } from './running-server.js';
import { servedSecret } from './server-secret.js';
import { readInput } from './read-input.js';
import { buildBody, collectFieldSetting, readLastBody, saveLastBody, transferIdOf, type FieldSetting } from './send-test-body.js';
import { checkSecretForScheme } from './signing-secret.js';

interface SendTestFlags {
  url?: string;
  source: string;
  secret?: string;
  dataDir?: string;
  file?: string;
  scheme?: SignatureScheme;
  transferId?: string;
  set: FieldSetting[];
  repeat?: boolean;
  retries: string;
}

interface Reply {
  status: number;
  body: string;
}

/** One signed POST; 5xx and network errors are retried briefly, anything else is the answer. */
async function post(url: string, body: Buffer, headers: Record<string, string>, retries: number): Promise<Reply> {
  return pRetry(
    async () => {
      const response = await request(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers }, headersTimeout: 10_000, bodyTimeout: 10_000 });
      const text = await response.body.text();
      if (response.statusCode >= 500) throw new Error(`HTTP ${response.statusCode}: ${text.slice(0, 200)}`);
      return { status: response.statusCode, body: text };
    },
    {
      retries,
      minTimeout: 250,
      maxTimeout: 2_000,
      shouldRetry: ({ error }) => !(error instanceof AbortError),
      onFailedAttempt: ({ error, attemptNumber, retriesLeft }) => {
        if (retriesLeft > 0) process.stderr.write(`attempt ${attemptNumber} failed (${error.message}); retrying\n`);
      },
    },
  );
}

/** The receiver this machine runs with these settings: its port on loopback when it listens on every interface. */
export function localWebhookUrl(config: Pick<Config, 'host' | 'port'>, source: string): string {
  const everywhere = config.host === '0.0.0.0' || config.host === '::';
  const host = everywhere ? '127.0.0.1' : config.host.includes(':') ? `[${config.host}]` : config.host;
  return `http://${host}:${config.port}/webhooks/${source}`;
}

/**
 * --secret, else the secret the running server verifies with (asked of it), else, with no server running,
 * the source's configured secret (HOOKRELAY_SECRET, config file) or the one serve generated (kept in the database).
 */
async function resolveSecret(flags: SendTestFlags, config: Readonly<Config>, server: RunningServer | undefined): Promise<{ secret: string; origin: string } | undefined> {
  if (flags.secret !== undefined) return { secret: flags.secret, origin: '--secret' };
  if (server) {
    const served = await servedSecret(server, config, flags.source, process.env);
    return served.value === null ? undefined : { secret: served.value, origin: served.origin };
  }
  const found = await sourceSecretFor(flags.source, process.env, flags.dataDir);
  return found && { secret: found.value, origin: found.origin };
}

/** What a 401 means here: which secret was used, and which one the server checks (its log says the same). */
function unauthorizedHint(signing: { origin: string } | undefined, server: RunningServer | undefined, source: string): string {
  const used = signing ? `signed with the secret from ${signing.origin}` : 'sent unsigned';
  const checks = server?.info.sources.find((s) => s.name === source)?.secretFrom;
  const expected = checks ? `the running server verifies source "${source}" with the secret from ${checks}` : `the server verifies source "${source}" with its own secret`;
  return `hint: the server refused the signature: this request was ${used}; ${expected}. \`hookrelay secrets show ${source}\` prints the secret in use; the server's log line for this request names the secret it checked.\n`;
}

async function sendTest(flags: SendTestFlags): Promise<void> {
  if (flags.repeat && (flags.file !== undefined || flags.transferId !== undefined || flags.set.length > 0)) {
    throw new HookrelayError('bad_request', '--repeat sends the last body again exactly: it takes no --file, --transfer-id or --set.');
  }
  const config = loadConfig(process.env, flags.dataDir === undefined ? {} : { dataDir: flags.dataDir });
  // The server running for these settings decides the URL, the scheme and the secret; --url names another receiver.
  const server = flags.url === undefined ? await findServer(config, process.env) : undefined;
  if (flags.url === undefined && !server) process.stderr.write(`${noServerFound(config)}; sending to the address and with the secret serve would use from this terminal's settings\n`);
  const served = server?.info.sources.find((s) => s.name === flags.source);
  const source = config.sources.find((s) => s.name === flags.source);
  const scheme = flags.scheme ?? (served?.scheme as SignatureScheme | undefined) ?? source?.scheme ?? 'hmac-sha256-hex';
  const signing = scheme === 'none' ? undefined : await resolveSecret(flags, config, server);
  if (scheme !== 'none' && !signing) {
    throw new HookrelayError('bad_request', `No secret for source "${flags.source}": pass --secret, set HOOKRELAY_SECRET, or start hookrelay serve once with these settings (it generates one and keeps it in the database${config.database.url === undefined ? ` and in ${config.dataDir}/${flags.source}.secret` : ''}).`);
  }
  if (signing) checkSecretForScheme(scheme, signing.secret, signing.origin);

  const body = flags.repeat
    ? readLastBody(config.dataDir)
    : buildBody({ ...(flags.file !== undefined && { file: await readInput(flags.file) }), ...(flags.transferId !== undefined && { transferId: flags.transferId }), settings: flags.set });
  const url = flags.url ?? (server ? `${server.info.url}/webhooks/${flags.source}` : localWebhookUrl(config, flags.source));
  const transferId = transferIdOf(body);
  process.stderr.write(`POST ${url}${transferId ? ` (transfer ${transferId})` : ''}\n`);
  const signed: Signing = scheme === 'none' ? { scheme } : { scheme, secret: signing!.secret };
  const reply = await post(url, body, signatureHeaders(signed, { id: newMessageId(), timestamp: new Date(), body }), Number(flags.retries));
  saveLastBody(config.dataDir, body);
  process.stdout.write(`HTTP ${reply.status}\n${reply.body}\n`);
  if (reply.status === 401) process.stderr.write(unauthorizedHint(signing, server, flags.source));
  if (reply.status < 200 || reply.status >= 300) process.exitCode = 1;
}

export function registerSendTestCommand(program: Command): void {
  program
    .command('send-test')
    .description('Send a realistic signed transfer:succeeded webhook (to this machine\'s receiver by default) and print the response')
    .option('-u, --url <url>', 'webhook URL (default: the running server\'s, found by its runtime file in the data dir; with none, http://127.0.0.1:<HOOKRELAY_PORT>/webhooks/<source>)')
    .option('--source <name>', 'source to send as: the URL path, and where the scheme and secret come from', 'checkout')
    .option('-s, --secret <secret>', 'signing secret (default: the one the running server verifies with, as `hookrelay secrets show` prints it; with no server running, HOOKRELAY_SECRET or the configured or generated one)')
    .option('--data-dir <dir>', 'the local data dir (HOOKRELAY_DATA_DIR, default ./data): the generated secret and the last body sent')
    .addOption(new Option('--scheme <scheme>', 'signature scheme (default: the source\'s)').choices(SIGNATURE_SCHEMES))
    .option('-f, --file <file>', 'send this body (exact bytes unless --set or --transfer-id change it) instead of a generated sample')
    .option('--transfer-id <id>', 'result.id of the body (a UUID): send the same id twice to see the duplicate answer')
    .option('--set <path=value>', 'set a field of the body, e.g. result.totalPriceUsd=150 (dotted path; JSON value, else a string); repeatable', collectFieldSetting, [])
    .option('--repeat', 'send the exact body of the last send-test again (kept in the data dir): the same transfer, a duplicate')
    .option('--retries <n>', 'retries on network errors and 5xx', '3')
    .action(sendTest);
}
