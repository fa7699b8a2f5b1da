import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { HookrelayError } from '../errors.js';
import { copyStore, type CopyProgress, type CopyResult } from '../store/copy-store.js';
import { clientConfig, redactUrl } from '../store/postgres/connection.js';
import { PostgresStore } from '../store/postgres/postgres-store.js';
import { DATABASE_FILE, SqliteStore } from '../store/sqlite/sqlite-store.js';
import type { CopyTable, CopyableStore } from '../store/copyable-store.js';
import { positiveInt } from './event-filter-flags.js';
import { INTERRUPTED_EXIT_CODE, onInterrupt } from './interrupt.js';
import { printJson, printLine } from './output.js';
import { createProgress } from './progress-bar.js';
import type { StoreLifecycle } from '../store/store-lifecycle.js';

type Env = Record<string, string | undefined>;

interface CopyFlags {
  from: string;
  to: string;
  batchSize: string;
  json?: boolean;
}

/** Test seam: a pause after each batch (ms), so a test can interrupt a copy in the middle. */
const PAUSE_ENV = 'HOOKRELAY_TEST_COPY_PAUSE_MS';

const POSTGRES_URL = /^postgres(ql)?:\/\//i;
const OTHER_URL = /^[a-z][a-z0-9+.-]*:\/\//i;

/** A copy needs few connections and may write big batches: its own settings, not a node's. */
const COPY_CONNECTION = { poolSize: 2, statementTimeoutMs: 300_000, lockTimeoutMs: 5_000, connectTimeoutMs: 10_000, notifications: false };

interface End {
  store: CopyableStore & StoreLifecycle;
  /** What messages may show: the data dir, or the URL with its password replaced. */
  label: string;
}

/** A data dir (the SQLite store) or a postgres:// URL; the source must exist, the target is created when it does not. */
async function openEnd(location: string, role: 'from' | 'to', env: Env): Promise<End> {
  if (POSTGRES_URL.test(location)) {
    const label = redactUrl(location);
    const settings = { url: location, ...(env.PGPASSWORD && { password: env.PGPASSWORD }), ...COPY_CONNECTION };
    try {
      clientConfig(settings);
    } catch {
      throw new HookrelayError('bad_request', `--${role} ${label}: not a valid PostgreSQL URL (postgres://user@host:5432/database).`);
    }
    try {
      return { store: await PostgresStore.open(settings), label };
    } catch (err) {
      // A newer schema names both versions; anything else is a connection or permission problem.
      if (err instanceof HookrelayError && err.code === 'invalid_config') throw new HookrelayError('invalid_config', `--${role} ${label}: ${err.message}`);
      const cause = (err as { cause?: Error }).cause ?? err;
      throw new HookrelayError('store_unavailable', `--${role} ${label}: cannot open the database: ${(cause as Error).message || String(cause)}`);
    }
  }
  if (OTHER_URL.test(location)) throw new HookrelayError('bad_request', `--${role} ${redactUrl(location)}: give a data dir or a postgres:// URL.`);
  const dataDir = resolve(location);
  if (role === 'from' && !existsSync(join(dataDir, DATABASE_FILE))) throw new HookrelayError('not_found', `--from ${location}: no hookrelay database in this directory.`);
  try {
    return { store: new SqliteStore({ dataDir, durability: 'full', busyTimeoutMs: 5_000 }), label: dataDir };
  } catch (err) {
    if (err instanceof HookrelayError) throw new HookrelayError(err.code, `--${role} ${location}: ${err.message}`);
    throw new HookrelayError('store_unavailable', `--${role} ${location}: cannot open the database: ${(err as Error).message}`);
  }
}

const TABLE_LABELS: Record<CopyTable, string> = { settings: 'settings', ruleSets: 'rule sets', events: 'events', seenKeys: 'seen keys', deliveries: 'deliveries', outages: 'outages', redrives: 'redrives', attempts: 'attempts', jobs: 'jobs' };

/** A bar on a terminal; elsewhere (logs, CI) a plain line per table and at most one every 2 s. */
function progressReporter(): { update: (p: CopyProgress) => void; stop: () => void } {
  const bar = createProgress('store copy');
  let started = false;
  let lastLine = 0;
  let lastTable: CopyTable | null = null;
  const plain = !process.stderr.isTTY;
  return {
    update(p) {
      if (!started) bar.start(p.total);
      started = true;
      bar.update(p.done, p.total);
      if (!plain) return;
      const now = Date.now();
      if (p.table !== lastTable || now - lastLine >= 2_000) {
        process.stderr.write(`store copy: ${TABLE_LABELS[p.table]}, ${p.done}/${p.total} rows\n`);
        lastLine = now;
        lastTable = p.table;
      }
    },
    stop() {
      if (started) bar.stop();
      started = false;
    },
  };
}

function printSummary(result: CopyResult, from: string, to: string): void {
  const parts = (Object.keys(result.tables) as CopyTable[]).map((table) => `${TABLE_LABELS[table]} ${result.tables[table].source} (${result.tables[table].added} new)`);
  printLine(`${result.complete ? 'copied' : 'interrupted; run the same command again to carry on. So far'}: ${parts.join(', ')}`);
  printLine(`from ${from} to ${to}; new events get ids above ${result.highestIds.events ?? 0}, new deliveries above ${result.highestIds.deliveries ?? 0}`);
}

async function copy(flags: CopyFlags): Promise<void> {
  const env = process.env;
  const batchSize = positiveInt(flags.batchSize, '--batch-size', 10_000);
  if (flags.from === flags.to || (!POSTGRES_URL.test(flags.from) && !POSTGRES_URL.test(flags.to) && resolve(flags.from) === resolve(flags.to))) {
    throw new HookrelayError('bad_request', '--from and --to name the same store.');
  }
  const pauseMs = env[PAUSE_ENV] ? Number(env[PAUSE_ENV]) : 0;
  const source = await openEnd(flags.from, 'from', env);
  let target: End;
  try {
    target = await openEnd(flags.to, 'to', env);
  } catch (err) {
    await source.store.close();
    throw err;
  }
  const interrupt = onInterrupt('store copy');
  const progress = progressReporter();
  try {
    const result = await copyStore(source.store, target.store, {
      batchSize,
      shouldStop: () => interrupt.signal.aborted,
      onProgress: progress.update,
      pauseMs,
      now: Date.now,
    });
    progress.stop();
    if (result.sourceChanged) {
      process.stderr.write('store copy: warning: the source changed while it was copied (a server is running on it). Stop it, then run the same command again.\n');
    }
    if (flags.json) printJson({ from: source.label, to: target.label, ...result });
    else printSummary(result, source.label, target.label);
    if (!result.complete) process.exitCode = INTERRUPTED_EXIT_CODE;
  } finally {
    progress.stop();
    interrupt.dispose();
    await Promise.all([source.store.close(), target.store.close()]);
  }
}

export function registerStoreCommand(program: Command): void {
  const store = program.command('store').description('Work on a whole store: copy a data dir into PostgreSQL');
  store
    .command('copy')
    .description('Copy every event, delivery, attempt, rule set and job from one store to another, keeping their ids; run it again to resume')
    .requiredOption('--from <dir|url>', 'the store to copy: a data dir (SQLite) or a postgres:// URL; stop its server first')
    .requiredOption('--to <url|dir>', 'the store to copy into: a postgres:// URL (password from the URL or PGPASSWORD) or a data dir')
    .option('--batch-size <n>', 'rows per transaction', '500')
    .option('--json', 'print the summary as JSON')
    .action(copy);
}
