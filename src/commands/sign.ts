import type { Command } from 'commander';
import { SIGNATURE_SCHEMES, type SignatureScheme } from '../signing/scheme.js';
import { newMessageId, signatureHeaders } from '../signing/sign.js';
import { readInput } from './read-input.js';
import { checkSecretForScheme } from './signing-secret.js';

interface SignFlags {
  secret?: string;
  scheme: SignatureScheme;
}

export function registerSignCommand(program: Command): void {
  program
    .command('sign')
    .description('Print the signature header(s) for a body, exactly as a sender would compute them')
    .argument('[file]', 'the body to sign; "-" or nothing reads standard input', '-')
    .option('-s, --secret <secret>', 'signing secret (default: first of HOOKRELAY_SECRET)')
    .option('--scheme <scheme>', `one of ${SIGNATURE_SCHEMES.filter((s) => s !== 'none').join(', ')}`, 'hmac-sha256-hex')
    .action(async (file: string, flags: SignFlags) => {
      const secret = flags.secret ?? process.env.HOOKRELAY_SECRET?.split(',')[0]?.trim();
      if (!secret) throw new Error('a secret is required: --secret S or HOOKRELAY_SECRET');
      if (flags.scheme === 'none' || !SIGNATURE_SCHEMES.includes(flags.scheme)) throw new Error(`--scheme must be hmac-sha256-hex or standard-webhooks`);
      checkSecretForScheme(flags.scheme, secret, flags.secret === undefined ? 'HOOKRELAY_SECRET' : '--secret');
      const headers = signatureHeaders({ scheme: flags.scheme, secret }, { id: newMessageId(), timestamp: new Date(), body: await readInput(file) });
      for (const [name, value] of Object.entries(headers)) process.stdout.write(`${name}: ${value}\n`);
    });
}
