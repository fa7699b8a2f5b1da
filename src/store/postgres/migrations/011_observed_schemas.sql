-- The observed schema of each (source, event name) and its drifts, as SQLite's migration 016. One node at a
-- time (the `schema` lease holder) writes them in one transaction per flush; every node reads them. Expand
-- only: new tables, nothing existing changes.
CREATE TABLE observed_schemas (
  source      text   NOT NULL,
  event       text   NOT NULL,
  events_seen bigint NOT NULL,
  first_seen  bigint NOT NULL,
  last_seen   bigint NOT NULL,
  truncated   bigint NOT NULL,
  fields      jsonb  NOT NULL,
  updated_at  bigint NOT NULL,
  PRIMARY KEY (source, event)
);

CREATE TABLE schema_learning (
  id          integer PRIMARY KEY CHECK (id = 1),
  generation  bigint  NOT NULL,
  position_tx text,
  position_id bigint,
  from_start  boolean NOT NULL DEFAULT false,
  updated_at  bigint  NOT NULL
);

CREATE TABLE schema_drifts (
  id          bigserial PRIMARY KEY,
  source      text   NOT NULL,
  event       text   NOT NULL,
  drift_key   text   NOT NULL,
  kind        text   NOT NULL,
  path        text   NOT NULL,
  before      jsonb  NOT NULL,
  after       jsonb  NOT NULL,
  event_id    bigint NOT NULL,
  detected_at bigint NOT NULL,
  UNIQUE (source, event, drift_key)
);
CREATE INDEX schema_drifts_by_event ON schema_drifts (source, event, id);

-- A backfill of the observed schema runs as an admin job of kind `schema-backfill`. A node of the previous
-- version reads such a job as it reads any other; it starts none.
ALTER TABLE admin_jobs DROP CONSTRAINT admin_jobs_kind_check;
ALTER TABLE admin_jobs ADD CONSTRAINT admin_jobs_kind_check CHECK (kind IN ('replay', 'retry', 'schema-backfill'));
