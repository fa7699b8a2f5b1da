-- The outbox: one row per (event, matching rule), created in the same transaction as the event, so an
-- acknowledged event can never miss its deliveries. A worker claims due rows with a lease by moving
-- next_attempt_at forward to the lease end and stamping lease_token: if it dies mid-attempt the row simply
-- becomes due again when the lease runs out (at-least-once, never lost).
CREATE TABLE deliveries (
  id              INTEGER PRIMARY KEY,
  event_id        INTEGER NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  rule_id         TEXT    NOT NULL,
  rule_set_hash   TEXT    NOT NULL,
  origin          TEXT    NOT NULL DEFAULT 'ingest' CHECK (origin IN ('ingest', 'replay')),
  state           TEXT    NOT NULL CHECK (state IN ('pending', 'delivered', 'dead')),
  body            BLOB,              -- transformed body; NULL = the event's raw bytes, untouched
  content_type    TEXT    NOT NULL,
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER,           -- unix ms; due when <= now (pending rows only)
  lease_token     TEXT,              -- set while an attempt runs
  last_status     INTEGER,
  last_error      TEXT,
  dead_reason     TEXT,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL
);

CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX deliveries_event ON deliveries (event_id);
CREATE INDEX deliveries_state_id ON deliveries (state, id);
CREATE INDEX deliveries_rule_state ON deliveries (rule_id, state);

-- Every attempt, appended, never overwritten.
CREATE TABLE delivery_attempts (
  id               INTEGER PRIMARY KEY,
  delivery_id      INTEGER NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
  attempt          INTEGER NOT NULL,
  started_at       INTEGER NOT NULL,
  duration_ms      INTEGER NOT NULL,
  url_origin       TEXT    NOT NULL, -- scheme://host:port only: full URLs may carry secrets
  status           INTEGER,
  error_code       TEXT,
  error_message    TEXT,
  response_excerpt TEXT,
  outcome          TEXT    NOT NULL CHECK (outcome IN ('delivered', 'retry', 'dead'))
);

CREATE INDEX delivery_attempts_delivery ON delivery_attempts (delivery_id, id);
