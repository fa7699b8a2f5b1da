import type { Command } from 'commander';
import pRetry, { AbortError } from 'p-retry';
import { request } from 'undici';
import { SIGNATURE_SCHEMES, type SignatureScheme } from '../signing/scheme.js';
import { sampleTransferSucceeded } from '../samples/transfer-succeeded.js';
import { newMessageId, signatureHeaders } from '../signing/sign.js';
import { readInput } from './read-input.js';

interface SendTestFlags {
  url: string;
  secret?: string;
  file?: string;
  scheme: SignatureScheme;
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

export function registerSendTestCommand(program: Command): void {
  program
    .command('send-test')
    .description('Send a realistic signed transfer:succeeded webhook to a URL and print the response')
    .requiredOption('-u, --url <url>', 'webhook URL, e.g. http://127.0.0.1:8080/webhooks/checkout')
    .option('-s, --secret <secret>', 'signing secret (default: first of HOOKRELAY_SECRET)')
    .option('-f, --file <file>', 'send this body (exact bytes) instead of a generated sample')
    .option('--scheme <scheme>', SIGNATURE_SCHEMES.join(', '), 'hmac-sha256-hex')
    .option('--retries <n>', 'retries on network errors and 5xx', '3')
    .action(async (flags: SendTestFlags) => {
      const secret = flags.secret ?? process.env.HOOKRELAY_SECRET?.split(',')[0]?.trim();
      if (!secret && flags.scheme !== 'none') throw new Error('a secret is required: --secret S or HOOKRELAY_SECRET');
      const body = flags.file ? await readInput(flags.file) : Buffer.from(JSON.stringify(sampleTransferSucceeded()));
      const signing = flags.scheme === 'none' ? { scheme: flags.scheme } : { scheme: flags.scheme, secret: secret ?? '' };
      const headers = signatureHeaders(signing, { id: newMessageId(), timestamp: new Date(), body });
      const reply = await post(flags.url, body, headers, Number(flags.retries));
      process.stdout.write(`HTTP ${reply.status}\n${reply.body}\n`);
      if (reply.status < 200 || reply.status >= 300) process.exitCode = 1;
    });
}
