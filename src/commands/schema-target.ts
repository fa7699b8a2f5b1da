import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import type { Config } from '../config.js';
import { HookrelayError } from '../errors.js';
import { createLogger } from '../log.js';
import { runSchemaBackfillJob } from '../operations/jobs/schema-backfill-job.js';
import { newestEventId } from '../operations/jobs/batches.js';
import type { DriftView, ObservedSchemaView } from '../operations/schema-view-schemas.js';
import { listDriftViews, listObservedSchemaViews } from '../operations/schema-views.js';
import type { JobView } from '../operations/view-schemas.js';
import type { RuleDescription } from '../rules/types.js';
import { SchemaLearner } from '../schema/schema-learner.js';
import type { Store } from '../store/store.js';
import { AdminClient } from './admin-client.js';
import { openCommandStore } from './command-store.js';
import { loadCurrentRules } from './local-target.js';

export interface SchemaFilter {
  source?: string;
  event?: string;
}

export interface BackfillProgress {
  state: 'running' | 'done' | 'cancelled' | 'failed';
  total: number;
  processed: number;
  error: string | null;
}

/** What the `schema` commands read and start: on the data dir (local mode) or a server's admin API (`--url`). */
export interface SchemaTarget {
  schemas(filter: SchemaFilter): Promise<ObservedSchemaView[]>;
  drifts(filter: SchemaFilter & { limit: number }): Promise<DriftView[]>;
  backfill(onProgress: (progress: BackfillProgress) => void, signal: AbortSignal): Promise<BackfillProgress>;
  close(): Promise<void>;
}

const POLL_MS = 250;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class RemoteSchemaTarget implements SchemaTarget {
  private readonly client: AdminClient;

  constructor(url: string, token: string) {
    this.client = new AdminClient(url, token);
  }

  async schemas(filter: SchemaFilter): Promise<ObservedSchemaView[]> {
    return (await this.client.call<{ schemas: ObservedSchemaView[] }>('GET', '/schema', { query: { ...filter } })).schemas;
  }

  async drifts(filter: SchemaFilter & { limit: number }): Promise<DriftView[]> {
    return (await this.client.call<{ drifts: DriftView[] }>('GET', '/schema/drifts', { query: { ...filter } })).drifts;
  }

  async backfill(onProgress: (progress: BackfillProgress) => void, signal: AbortSignal): Promise<BackfillProgress> {
    let job = await this.client.call<JobView>('POST', '/schema/backfill');
    while (job.state === 'running') {
      onProgress(job);
      if (signal.aborted) job = await this.client.call<JobView>('POST', `/jobs/${job.id}/cancel`);
      else {
        await sleep(POLL_MS);
        job = await this.client.call<JobView>('GET', `/jobs/${job.id}`);
      }
    }
    return job;
  }

  async close(): Promise<void> {}
}

/**
 * The data dir opened directly. A backfill here starts learning over and runs a learner in this process
 * under the `schema` lease; when a running server holds the lease, the server learns and this follows it.
 * Drifts a local backfill finds are recorded, not alerted.
 */
export class LocalSchemaTarget implements SchemaTarget {
  private constructor(
    private readonly config: Readonly<Config>,
    private readonly env: Record<string, string | undefined>,
    private readonly store: Store,
  ) {}

  /** The store `serve` would open from this configuration; a data dir without a database is an error. */
  static async open(config: Readonly<Config>, env: Record<string, string | undefined>): Promise<LocalSchemaTarget> {
    const store = await openCommandStore(config);
    if (!store) throw new HookrelayError('not_found', `No hookrelay database in ${config.dataDir}. Pass --data-dir <dir>, or --url to use a running server's admin API.`);
    return new LocalSchemaTarget(config, env, store);
  }

  schemas(filter: SchemaFilter): Promise<ObservedSchemaView[]> {
    return listObservedSchemaViews(this.store, filter);
  }

  async drifts(filter: SchemaFilter & { limit: number }): Promise<DriftView[]> {
    // Without readable rules the drifts are listed without the rules they touch.
    const rules: RuleDescription[] = await loadCurrentRules(this.config, this.env).then((set) => set.rules.map((rule) => rule.describe()), () => []);
    return (await listDriftViews(this.store, filter, rules)).drifts;
  }

  async backfill(onProgress: (progress: BackfillProgress) => void, signal: AbortSignal): Promise<BackfillProgress> {
    const throughId = await newestEventId(this.store);
    const total = await this.store.countEvents({});
    await this.store.restartSchemaLearning();
    const learner = new SchemaLearner({ store: this.store, settings: { ...this.config.schema, intervalMs: POLL_MS }, logger: createLogger('warn', pino.destination({ dest: 2, sync: true })), leaseHolder: `cli-${randomUUID()}` });
    learner.start();
    try {
      const result = await runSchemaBackfillJob(
        {
          store: this.store,
          shouldStop: () => signal.aborted,
          onProgress: async (progress) => onProgress({ state: 'running', total: progress.total, processed: progress.processed, error: null }),
        },
        { total, throughId, pollMs: POLL_MS, stallMs: 120_000, now: Date.now },
      );
      return { state: result.stopped ? 'cancelled' : 'done', total: result.progress.total, processed: result.progress.processed, error: null };
    } finally {
      await learner.stop();
    }
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
