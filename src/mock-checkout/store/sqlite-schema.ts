import type { BetterSqlite3 as Database } from '../../sqlite-driver.js';

/** Bumped whenever the statements below change; a file written by a newer mock is refused, not guessed at. */
export const MOCK_SCHEMA_VERSION = 1;

// Records are kept whole as JSON (the mock never queries inside them); the columns beside them exist
// for ordering, filtering by checkout and cascading deletes.
const SCHEMA_V1 = `
CREATE TABLE mock_checkouts (
  position INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  data TEXT NOT NULL
);
CREATE TABLE mock_transfers (
  position INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  checkout_id TEXT NOT NULL REFERENCES mock_checkouts(id) ON DELETE CASCADE,
  quantity INTEGER NOT NULL,
  data TEXT NOT NULL
);
CREATE INDEX mock_transfers_by_checkout ON mock_transfers(checkout_id, position);
CREATE TABLE mock_deliveries (
  position INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  checkout_id TEXT NOT NULL REFERENCES mock_checkouts(id) ON DELETE CASCADE,
  data TEXT NOT NULL
);
CREATE INDEX mock_deliveries_by_checkout ON mock_deliveries(checkout_id, position);
`;

/** Creates the tables on a fresh file; accepts a file already at this version; refuses anything else. */
export function applyMockSchema(db: Database.Database): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version === MOCK_SCHEMA_VERSION) return;
  if (version !== 0) {
    throw new Error(`mock checkout database has schema version ${version}; this version understands ${MOCK_SCHEMA_VERSION}`);
  }
  db.transaction(() => {
    db.exec(SCHEMA_V1);
    db.pragma(`user_version = ${MOCK_SCHEMA_VERSION}`);
  }).immediate();
}
