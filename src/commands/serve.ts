import type { Command } from 'commander';
import { loadConfig, type Config } from '../config.js';
import { limitHeapGrowth } from './heap-growth.js';
import { startHookrelay } from '../hookrelay.js';
import { chooseLogFormat, createLogDestination, createLogger } from '../log.js';
import { exitProcess } from './process-exit.js';
import { removeRuntimeFile, writeRuntimeFile } from '../runtime/runtime-file.js';
import { adminTokenOrigin, allowNetworksOrigin, secretOriginOf } from '../runtime/setting-origins.js';
import { storeIdentityOf } from '../runtime/store-identity.js';
import { VERSION } from '../version.js';

interface ServeFlags {
  port?: string;
  host?: string;
  dataDir?: string;
  rulesDir?: string;
  role?: string;
}

function flagOverrides(flags: ServeFlags): Partial<Record<keyof Config, unknown>> {
  const overrides: Partial<Record<keyof Config, unknown>> = {};
  if (flags.port !== undefined) overrides.port = flags.port;
  if (flags.host !== undefined) overrides.host = flags.host;
  if (flags.dataDir !== undefined) overrides.dataDir = flags.dataDir;
  if (flags.rulesDir !== undefined) overrides.rulesDir = flags.rulesDir;
  if (flags.role !== undefined) overrides.role = flags.role;
  return overrides;
}

/** Where a generated value is kept: its file on SQLite (as always), the database every node reads on PostgreSQL. */
function savedWhere(file: string | null, command: string): string {
  return file === null ? `kept in the database for every node; \`hookrelay ${command}\` prints it again` : `saved to ${file}, shown only now`;
}

async function serve(flags: ServeFlags): Promise<void> {
  limitHeapGrowth();
  const config = loadConfig(process.env, flagOverrides(flags));
  const logger = createLogger(config.logLevel, await createLogDestination(chooseLogFormat(config.logFormat, process.stdout.isTTY === true)));
  const app = await startHookrelay(config, logger, { env: process.env });
  // Before anything is printed: whoever waits for the listening line may signal at once.
  let signals = 0;
  const stop = (signal: NodeJS.Signals): void => {
    signals += 1;
    if (signals > 1) {
      logger.warn({ signal }, 'second signal: exiting now');
      exitProcess(1);
    }
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    // Logs are written asynchronously: flush before exiting so the last lines are never lost.
    const exitAfterFlush = (code: number): void => {
      logger.flush(() => exitProcess(code, (reads) => process.stderr.write(`${reads} rule file read(s) still wait on the file system; exiting with SIGKILL\n`)));
    };
    app.close().then(
      () => {
        removeRuntimeFile(config.dataDir, process.pid);
        logger.info('stopped');
        exitAfterFlush(0);
      },
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        exitAfterFlush(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);

  const base = config.publicUrl ?? app.url;
  // publicUrl names the webhook listener; it is the console's address too only when they share it.
  const adminBase = config.admin.port === undefined ? base : app.adminUrl;

  for (const generated of app.generatedSecrets) {
    // Shown once, on stderr so it stays out of the JSON log stream; kept in the store for later starts and other nodes.
    process.stderr.write(
      `\nhookrelay generated a signing secret for source "${generated.source}" (${savedWhere(generated.file, `secrets show ${generated.source}`)}):\n\n    ${generated.secret}\n\n` +
        `Give it to the sender and point its webhook URL at ${base}/webhooks/${generated.source}\n\n`,
    );
  }
  if (app.generatedAdminToken) process.stderr.write(`\nhookrelay generated an admin token (${savedWhere(app.generatedAdminToken.file, 'secrets show --admin-token')}):\n\n    ${app.generatedAdminToken.token}\n\nUse it as "Authorization: Bearer <token>" on ${adminBase}/admin/api and to log in to ${adminBase}/console\n\n`);
  // Where commands find this server: the node registry (PostgreSQL), and the runtime file with what it judges with (no secret).
  await app.node.announce(app.adminUrl).catch((err: unknown) => logger.warn({ err }, 'could not register this node\'s URL; commands find it by its runtime file'));
  writeRuntimeFile(config.dataDir, {
    url: app.url,
    adminUrl: app.adminUrl,
    pid: process.pid,
    nodeId: app.node.id,
    version: VERSION,
    startedAt: new Date(app.node.node.startedAt).toISOString(),
    store: storeIdentityOf(config),
    delivery: { allowNetworks: [...config.delivery.allowNetworks], allowNetworksFrom: allowNetworksOrigin(config, process.env) },
    adminTokenFrom: adminTokenOrigin(config, process.env),
    sources: config.sources.map((source) => ({ name: source.name, scheme: source.scheme, secretFrom: secretOriginOf(source, process.env) })),
  });
  logger.info({ url: app.url, adminUrl: app.adminUrl, webhooks: app.sources.map((s) => `${base}/webhooks/${s.name}`), dataDir: config.dataDir, durability: config.durability, role: app.node.node.role, nodeId: app.node.id }, 'hookrelay listening');
}

export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('Run the webhook receiver (settings from HOOKRELAY_* environment variables and HOOKRELAY_CONFIG)')
    .option('-p, --port <port>', 'port to listen on (HOOKRELAY_PORT, default 8080)')
    .option('--host <host>', 'address to receive webhooks on (HOOKRELAY_HOST, default 127.0.0.1; 0.0.0.0 for every interface)')
    .option('--data-dir <dir>', 'where the SQLite database and generated secrets live (HOOKRELAY_DATA_DIR, default ./data)')
    .option('--rules-dir <dir>', 'folder of rule files (HOOKRELAY_RULES_DIR, default ./rules)')
    .option('--role <role>', 'all (receive and deliver), receiver (no delivery loop) or worker (deliver; webhooks answered 503) (HOOKRELAY_ROLE, default all)')
    .action(serve);
}
