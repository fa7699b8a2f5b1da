import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

/**
 * The one place that loads better-sqlite3; everything that opens an SQLite file imports it from here.
 *
 * Two majors are installed and one is chosen for the running Node.js:
 * - better-sqlite3 13 is built on Node-API 10. Node 24's `node::ObjectWrap` registers an environment
 *   cleanup hook that 12 trips when the garbage collector destroys a statement without a current
 *   environment (an abort, exit 134, while running or at exit); 13 does not use `ObjectWrap`.
 * - better-sqlite3 12 (the `better-sqlite3` package name) serves runtimes without Node-API 10: every
 *   Node 20 and Node 22 before 22.14, where 13 crashes when it opens a database.
 */
export type SqliteDriverName = 'better-sqlite3' | 'better-sqlite3-napi';

/** The Node-API version better-sqlite3 13 is compiled against. */
export const NAPI_DRIVER_MIN_NODE_API = 10;

/** The driver for a runtime whose highest Node-API version is `nodeApiVersion` (`process.versions.napi`). */
export function chooseSqliteDriver(nodeApiVersion: string | undefined): SqliteDriverName {
  const version = Number(nodeApiVersion);
  return Number.isInteger(version) && version >= NAPI_DRIVER_MIN_NODE_API ? 'better-sqlite3-napi' : 'better-sqlite3';
}

const require = createRequire(import.meta.url);

export const sqliteDriverName: SqliteDriverName = chooseSqliteDriver(process.versions.napi);

/** Absolute path of the chosen driver's entry point, for threads that load it themselves. */
export const sqliteDriverPath: string = require.resolve(sqliteDriverName);

// Both majors share the API this project uses (open, prepare, run/get/all/iterate, transaction, pragma,
// exec, close), so 12's type definitions describe either.
const Database = require(sqliteDriverName) as typeof BetterSqlite3;

export default Database;
export type { BetterSqlite3 };
