-- The node registry, jobs owned by a node, and leases for work one node does at a time (as SQLite's 010).
-- Times here are database-clock unix ms, like due times and lease ends.

-- One row per running `hookrelay serve` (id random per process start). A node is live while its last
-- heartbeat is younger than three of its heartbeat intervals; it deletes its row on a clean shutdown.
CREATE TABLE nodes (
  id             text    PRIMARY KEY,
  host           text    NOT NULL,
  pid            integer NOT NULL,
  role           text    NOT NULL CHECK (role IN ('receiver', 'worker', 'all')),
  version        text    NOT NULL,
  rule_set_hash  text,
  heartbeat_ms   integer NOT NULL,
  started_at     bigint  NOT NULL,
  last_heartbeat bigint  NOT NULL
);

-- The node running a job: a starting node fails only the running jobs whose node is no longer live.
-- Null for jobs recorded before nodes had ids (and by versions before this one, during a rolling upgrade).
ALTER TABLE admin_jobs ADD COLUMN node_id text;

-- Work that one node does at a time across the cluster (a retention pass): held by `holder` until
-- `expires_at`, renewed by it while it works; an expired lease may be taken by any node.
CREATE TABLE leases (
  name       text   PRIMARY KEY,
  holder     text   NOT NULL,
  expires_at bigint NOT NULL
);
