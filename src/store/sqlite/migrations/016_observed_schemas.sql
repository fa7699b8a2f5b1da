-- The observed schema of each (source, event name) and its drifts. One node at a time (the `schema` lease
-- holder) learns from new events in commit order and writes these rows in one transaction per flush; every
-- node reads them. Expand only: new tables, nothing existing changes.
CREATE TABLE observed_schemas (
  source      TEXT    NOT NULL,
  event       TEXT    NOT NULL,
  events_seen INTEGER NOT NULL,
  first_seen  INTEGER NOT NULL,
  last_seen   INTEGER NOT NULL,
  truncated   INTEGER NOT NULL,
  fields      TEXT    NOT NULL,  -- JSON array of field summaries, at most schema.maxFields
  updated_at  INTEGER NOT NULL,
  PRIMARY KEY (source, event)
);

-- Where the learner stands: one row. `generation` changes when a backfill starts learning over.
CREATE TABLE schema_learning (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  generation  INTEGER NOT NULL,
  position_tx TEXT,
  position_id INTEGER,
  from_start  INTEGER NOT NULL DEFAULT 0,
  updated_at  INTEGER NOT NULL
);

-- Each drift once (unique key), with the first event that showed it.
CREATE TABLE schema_drifts (
  id          INTEGER PRIMARY KEY,
  source      TEXT    NOT NULL,
  event       TEXT    NOT NULL,
  drift_key   TEXT    NOT NULL,
  kind        TEXT    NOT NULL,
  path        TEXT    NOT NULL,
  before      TEXT    NOT NULL,  -- JSON array of types
  after       TEXT    NOT NULL,
  event_id    INTEGER NOT NULL,
  detected_at INTEGER NOT NULL,
  UNIQUE (source, event, drift_key)
);
CREATE INDEX schema_drifts_by_event ON schema_drifts (source, event, id);

-- A backfill of the observed schema runs as an admin job of kind `schema-backfill`. SQLite cannot change a
-- CHECK constraint in place, so the jobs table is rebuilt with the wider one (same columns, rows and ids).
-- A node of the previous version reads such a job as it reads any other; it starts none.
CREATE TABLE admin_jobs_next (
  id          INTEGER PRIMARY KEY,
  kind        TEXT    NOT NULL CHECK (kind IN ('replay', 'retry', 'schema-backfill')),
  state       TEXT    NOT NULL CHECK (state IN ('running', 'done', 'cancelled', 'failed')),
  filter      TEXT    NOT NULL,
  rule_id     TEXT,
  total       INTEGER NOT NULL,
  processed   INTEGER NOT NULL DEFAULT 0,
  created     INTEGER NOT NULL DEFAULT 0,
  failed      INTEGER NOT NULL DEFAULT 0,
  started_at  INTEGER NOT NULL,
  finished_at INTEGER,
  error       TEXT,
  summary     TEXT,
  node_id     TEXT
);
INSERT INTO admin_jobs_next (id, kind, state, filter, rule_id, total, processed, created, failed, started_at, finished_at, error, summary, node_id)
  SELECT id, kind, state, filter, rule_id, total, processed, created, failed, started_at, finished_at, error, summary, node_id FROM admin_jobs;
DROP TABLE admin_jobs;
ALTER TABLE admin_jobs_next RENAME TO admin_jobs;
CREATE INDEX admin_jobs_running ON admin_jobs (id) WHERE state = 'running';
