// The database side of a benchmark case on PostgreSQL: a fresh database per case, and what the server did
// for it (commits, rows, WAL bytes, CPU of its backends). pg_stat_statements is not assumed: counters come
// from pg_stat_database and pg_current_wal_lsn(), CPU from /proc of the backends (the server runs on this
// machine).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { cpuMs } from './run.mjs';

export const BENCH_DATABASE_URL = process.env.HOOKRELAY_BENCH_DATABASE_URL ?? process.env.HOOKRELAY_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function withClient(url, fn) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** CREATE DATABASE `name` (default hookrelay_bench_<random>; one left by an earlier run is dropped first); resolves with its URL, its name and `drop()`. */
export async function createBenchDatabase(name = `hookrelay_bench_${randomBytes(5).toString('hex')}`) {
  await withClient(BENCH_DATABASE_URL, async (c) => {
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.query(`CREATE DATABASE ${name}`);
  });
  const url = new URL(BENCH_DATABASE_URL);
  url.pathname = `/${name}`;
  return { name, url: url.toString(), drop: () => withClient(BENCH_DATABASE_URL, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)) };
}

function procCpuMs(pid) {
  try {
    return cpuMs(pid);
  } catch {
    return null; // not on this machine, or gone
  }
}

/**
 * A snapshot of the database's counters. WAL is written for the whole server, so the WAL other databases
 * write meanwhile (a shared server) is estimated over an idle second first and subtracted by `delta`.
 */
export async function databaseSnapshot(name) {
  return withClient(BENCH_DATABASE_URL, async (c) => {
    // Backends publish their counters at most once a second, and when they go idle.
    await c.query('SELECT pg_stat_clear_snapshot()');
    const stats = (await c.query('SELECT xact_commit::bigint AS commits, tup_inserted::bigint AS inserted, tup_updated::bigint AS updated, pg_current_wal_lsn()::text AS lsn FROM pg_stat_database WHERE datname = $1', [name])).rows[0];
    const pids = (await c.query('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name])).rows.map((r) => r.pid);
    const cpu = new Map(pids.map((pid) => [pid, procCpuMs(pid)]));
    return { at: performance.now(), commits: Number(stats.commits), inserted: Number(stats.inserted), updated: Number(stats.updated), lsn: stats.lsn, cpu };
  });
}

/** The server's WAL bytes per second while this run does nothing: what everyone else writes. */
export async function backgroundWalRate(ms = 1000) {
  return withClient(BENCH_DATABASE_URL, async (c) => {
    const before = (await c.query('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0].lsn;
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, ms));
    const bytes = Number((await c.query('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::bigint AS b', [before])).rows[0].b);
    return bytes / ((performance.now() - t0) / 1000);
  });
}

/**
 * Work per unit between two snapshots: commits, rows inserted and updated, WAL bytes (less the background
 * rate), and CPU µs of the database's backends (those that ended in between are not counted).
 */
export async function databaseWork(before, after, units, backgroundBytesPerSec = 0) {
  const wal = await withClient(BENCH_DATABASE_URL, async (c) => Number((await c.query('SELECT pg_wal_lsn_diff($1, $2)::bigint AS b', [after.lsn, before.lsn])).rows[0].b));
  const seconds = (after.at - before.at) / 1000;
  let cpuMs = 0;
  let cpuKnown = true;
  for (const [pid, ms] of after.cpu) {
    if (ms === null) cpuKnown = false;
    else cpuMs += ms - (before.cpu.get(pid) ?? 0);
  }
  const per = (x) => x / Math.max(1, units);
  return {
    commits: per(after.commits - before.commits),
    inserted: per(after.inserted - before.inserted),
    updated: per(after.updated - before.updated),
    walBytes: per(Math.max(0, wal - backgroundBytesPerSec * seconds)),
    dbCpuUs: cpuKnown ? per(cpuMs * 1000) : null,
  };
}
