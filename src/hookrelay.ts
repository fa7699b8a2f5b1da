import type { Logger } from 'pino';
import type { Config, SourceConfig } from './config.js';
import { createIngestHandler } from './ingest/ingest-handler.js';
import { startServer, type RunningServer } from './server.js';
import { ensureSourceSecrets, type GeneratedSecret } from './source-secrets.js';
import { SqliteStore } from './store/sqlite/sqlite-store.js';
import type { Store } from './store/store.js';

export interface RunningHookrelay {
  url: string;
  port: number;
  store: Store;
  sources: readonly SourceConfig[];
  /** Secrets created on this start (first start without a configured secret); shown to the operator once. */
  generatedSecrets: GeneratedSecret[];
  server: RunningServer;
  /** Graceful stop: stop accepting, finish in-flight requests, close the database. */
  close(): Promise<void>;
}

/** The composition root: config in, a running receiver out. The CLI and the tests both start it this way. */
export async function startHookrelay(config: Readonly<Config>, logger: Logger): Promise<RunningHookrelay> {
  const { sources, generated } = ensureSourceSecrets(config.sources, config.dataDir);
  for (const source of sources) {
    if (source.scheme === 'none') {
      logger.warn({ source: source.name }, `SIGNATURE CHECKS ARE OFF for source "${source.name}" (scheme: none): anyone who can reach this port can store events`);
    }
  }
  const store = new SqliteStore({ dataDir: config.dataDir, durability: config.durability });
  const ingest = createIngestHandler({
    sources: new Map(sources.map((s) => [s.name, s])),
    store,
    maxBody: config.maxBody,
    logger,
  });

  let server: RunningServer;
  try {
    server = await startServer({
      config,
      logger,
      ingest,
      readiness: async () => {
        try {
          await store.checkWritable();
          return { ready: true, checks: { store: 'ok' } };
        } catch (err) {
          return { ready: false, checks: { store: (err as Error).message } };
        }
      },
    });
  } catch (err) {
    await store.close();
    throw err;
  }

  let closing: Promise<void> | undefined;
  return {
    url: server.url,
    port: server.port,
    store,
    sources,
    generatedSecrets: generated,
    server,
    close: () =>
      (closing ??= (async () => {
        await server.close();
        await store.close();
      })()),
  };
}
