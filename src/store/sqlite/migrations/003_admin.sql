-- Admin API: every list filter is served by an index that ends in id, so a page is one index range read
-- newest first from the cursor (`col = ? AND id < ? ORDER BY id DESC LIMIT n`), at any depth.
-- Event name, source and validation have few values, but a rare one (an unrecognised event, a second
-- source) would otherwise mean scanning the whole table for one page.
CREATE INDEX events_event_id ON events (event, id);
CREATE INDEX events_source_id ON events (source, id);
CREATE INDEX events_validation_id ON events (validation, id);

-- "Events with a dead (or pending) delivery", newest event first, read straight from this index.
CREATE INDEX deliveries_state_event ON deliveries (state, event_id);
-- Deliveries of one rule newest first (deliveries_rule_state orders them by state first).
CREATE INDEX deliveries_rule_id ON deliveries (rule_id, id);

-- Bulk replays and retries run as jobs in small batches; their progress is kept here so it can be polled,
-- and a job a restart interrupted is reported as failed instead of vanishing.
CREATE TABLE admin_jobs (
  id          INTEGER PRIMARY KEY,
  kind        TEXT    NOT NULL CHECK (kind IN ('replay', 'retry')),
  state       TEXT    NOT NULL CHECK (state IN ('running', 'done', 'cancelled', 'failed')),
  filter      TEXT    NOT NULL,  -- JSON of the filter the job was started with
  rule_id     TEXT,
  total       INTEGER NOT NULL,
  processed   INTEGER NOT NULL DEFAULT 0,
  created     INTEGER NOT NULL DEFAULT 0,
  failed      INTEGER NOT NULL DEFAULT 0,
  started_at  INTEGER NOT NULL,
  finished_at INTEGER,
  error       TEXT
);

CREATE INDEX admin_jobs_running ON admin_jobs (id) WHERE state = 'running';
