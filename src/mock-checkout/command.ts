import { InvalidArgumentError, type Command } from 'commander';
import { createLogger, type Logger } from '../log.js';
import { createMockCheckout } from './create-mock-checkout.js';

export const API_KEY_ENV = 'HOOKRELAY_MOCK_API_KEY';

interface MockCheckoutCommandOptions {
  port: number;
  host: string;
  db?: string;
  apiKey?: string;
  publicUrl?: string;
  webhookSecret?: string;
  allowRemoteWebhooks?: boolean;
}

/** What the command touches outside itself; tests pass their own. */
export interface MockCheckoutCommandIO {
  env?: NodeJS.ProcessEnv;
  print?: (line: string) => void;
  signals?: Pick<NodeJS.EventEmitter, 'once' | 'off'>;
  logger?: Logger;
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
    .option('--webhook-secret <secret>', 'webhook secret for checkouts created without one (default: random per checkout)')
    .option('--allow-remote-webhooks', 'also deliver to webhook URLs that are not loopback addresses')
    .action(async (options: MockCheckoutCommandOptions) => {
      const keySource = options.apiKey ? '--api-key' : env[API_KEY_ENV] ? API_KEY_ENV : undefined;
      const mock = createMockCheckout({
        apiKey: options.apiKey ?? (env[API_KEY_ENV] || undefined),
        db: options.db,
        publicUrl: options.publicUrl,
        webhookSecret: options.webhookSecret,
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
