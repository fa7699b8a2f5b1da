-- The node registry, jobs owned by a node, and leases for work one node does at a time.

-- One row per running `hookrelay serve` (id random per process start). A node is live while its last
-- heartbeat is younger than three of its heartbeat intervals; it deletes its row on a clean shutdown.
CREATE TABLE nodes (
  id             TEXT    PRIMARY KEY,
  host           TEXT    NOT NULL,
  pid            INTEGER NOT NULL,
  role           TEXT    NOT NULL CHECK (role IN ('receiver', 'worker', 'all')),
  version        TEXT    NOT NULL,
  rule_set_hash  TEXT,
  heartbeat_ms   INTEGER NOT NULL,
  started_at     INTEGER NOT NULL,
  last_heartbeat INTEGER NOT NULL
);

-- The node running a job: a starting node fails only the running jobs whose node is no longer live.
-- Null for jobs recorded before nodes had ids.
ALTER TABLE admin_jobs ADD COLUMN node_id TEXT;

-- Work that one node does at a time (a retention pass): held by `holder` until `expires_at`, renewed by it.
CREATE TABLE leases (
  name       TEXT    PRIMARY KEY,
  holder     TEXT    NOT NULL,
  expires_at INTEGER NOT NULL
);
