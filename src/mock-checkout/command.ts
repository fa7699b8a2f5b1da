import { readFile } from 'node:fs/promises';
import { InvalidArgumentError, type Command } from 'commander';
import { HookrelayError } from '../errors.js';
import { createLogger, type Logger } from '../log.js';
import { createMockCheckout } from './create-mock-checkout.js';

export const API_KEY_ENV = 'HOOKRELAY_MOCK_API_KEY';
export const WEBHOOK_SECRET_ENV = 'HOOKRELAY_MOCK_WEBHOOK_SECRET';

interface MockCheckoutCommandOptions {
  port: number;
  host: string;
  db?: string;
  apiKey?: string;
  publicUrl?: string;
  webhookSecret?: string;
  webhookSecretFile?: string;
  allowRemoteWebhooks?: boolean;
}

/** What the command touches outside itself; tests pass their own. */
export interface MockCheckoutCommandIO {
  env?: NodeJS.ProcessEnv;
  print?: (line: string) => void;
  signals?: Pick<NodeJS.EventEmitter, 'once' | 'off'>;
  logger?: Logger;
}

/**
 * --webhook-secret, else the first line of --webhook-secret-file, else $HOOKRELAY_MOCK_WEBHOOK_SECRET. The file
 * and the variable keep the secret out of the process list, where any local user can read a flag's value.
 */
async function webhookSecretOf(options: MockCheckoutCommandOptions, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  if (options.webhookSecret !== undefined) return options.webhookSecret;
  if (options.webhookSecretFile !== undefined) {
    const text = await readFile(options.webhookSecretFile, 'utf8').catch((err: Error) => {
      throw new HookrelayError('invalid_config', `--webhook-secret-file: cannot read ${options.webhookSecretFile}: ${err.message}`);
    });
    const secret = text.split(/\r?\n/)[0]!.trim();
    if (secret === '') throw new HookrelayError('invalid_config', `--webhook-secret-file: ${options.webhookSecretFile} is empty`);
    return secret;
  }
  return env[WEBHOOK_SECRET_ENV] || undefined;
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError('must be a port number 0-65535');
  return port;
}

/** Adds `hookrelay mock-checkout`: runs the mock until SIGTERM or SIGINT, then shuts down gracefully. */
export function registerMockCheckoutCommand(program: Command, io: MockCheckoutCommandIO = {}): Command {
  const env = io.env ?? process.env;
  const print = io.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const signals = io.signals ?? process;

  return program
    .command('mock-checkout')
    .description('Run the mock checkout service (API, buyer page, dashboard, signed webhooks) for local tests')
    .option('--port <port>', 'port to listen on (0 = any free port)', parsePort, 8090)
    .option('--host <host>', 'interface to bind', '127.0.0.1')
    .option('--db <file>', 'SQLite file that keeps checkouts, purchases and deliveries across restarts (default: in memory)')
    .option('--api-key <key>', `API key for the API and dashboard (default: $${API_KEY_ENV}, else generated and printed)`)
    .option('--public-url <url>', 'base URL used in checkout links (default: the listening address)')
    .option('--webhook-secret-file <file>', `file whose first line is the webhook secret for checkouts created without one (or set $${WEBHOOK_SECRET_ENV}; default: random per checkout)`)
    .option('--webhook-secret <secret>', 'the same secret given on the command line, where other local users can see it (ps): prefer the file or the variable')
    .option('--allow-remote-webhooks', 'also deliver to webhook URLs that are not loopback addresses')
    .action(async (options: MockCheckoutCommandOptions) => {
      const keySource = options.apiKey ? '--api-key' : env[API_KEY_ENV] ? API_KEY_ENV : undefined;
      const mock = createMockCheckout({
        apiKey: options.apiKey ?? (env[API_KEY_ENV] || undefined),
        db: options.db,
        publicUrl: options.publicUrl,
        webhookSecret: await webhookSecretOf(options, env),
        allowRemoteWebhooks: options.allowRemoteWebhooks ?? false,
        logger: io.logger ?? createLogger('info', process.stderr),
      });
      const server = await mock.listen(options.port, options.host).catch(async (err: unknown) => {
        await mock.close();
        throw err;
      });
      const base = options.publicUrl?.replace(/\/+$/, '') ?? server.url;
      print(`Mock checkout listening on ${server.url}`);
      print(`Dashboard: ${base}/dashboard`);
      print(`API:       ${base}/api/v1`);
      // A key the user supplied is not echoed: it may be a shared secret that should stay out of CI logs.
      print(keySource ? `API key:   (from ${keySource})` : `API key:   ${mock.apiKey}`);
      print(options.db ? `Data:      ${options.db}` : 'Data:      in memory (use --db <file> to keep it)');

      await new Promise<void>((resolve) => {
        const stop = (signal: string) => {
          signals.off('SIGTERM', onTerm);
          signals.off('SIGINT', onInt);
          print(`Received ${signal}, shutting down`);
          void server.close().then(resolve);
        };
        const onTerm = () => stop('SIGTERM');
        const onInt = () => stop('SIGINT');
        signals.once('SIGTERM', onTerm);
        signals.once('SIGINT', onInt);
      });
      print('Mock checkout stopped');
    });
}
