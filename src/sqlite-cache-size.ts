/**
 * The most each SQLite connection's page cache holds unless `database.sqliteCacheSize` says otherwise:
 * SQLite's own default. better-sqlite3 is built with 16 MiB, which an ingest load fills within seconds with
 * pages it has already committed (the unique key's index lands on random pages): resident memory that
 * bought no CPU in `bench:ingest` (bench/README.md). A page not in the cache is read back from the
 * operating system's file cache.
 */
export const DEFAULT_SQLITE_CACHE_BYTES = 2 * 1024 * 1024;
