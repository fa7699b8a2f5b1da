-- Every accepted webhook, once per (source, event, result id). The raw body bytes are kept exactly as
-- received so that replay and export are byte-exact; the columns beside it exist only for lookup.
CREATE TABLE events (
  id               INTEGER PRIMARY KEY,
  source           TEXT    NOT NULL,
  event            TEXT    NOT NULL,
  result_id        TEXT    NOT NULL,
  checkout_id      TEXT,
  email            TEXT COLLATE NOCASE,
  wallet_address   TEXT COLLATE NOCASE,
  validation       TEXT    NOT NULL CHECK (validation IN ('valid', 'unrecognised')),
  received_at      INTEGER NOT NULL,  -- unix ms of the first delivery
  last_received_at INTEGER NOT NULL,  -- unix ms of the latest (possibly duplicate) delivery
  received_count   INTEGER NOT NULL DEFAULT 1,
  headers          TEXT    NOT NULL,  -- JSON object of received headers, credentials removed
  body             BLOB    NOT NULL,
  -- result_id first: the idempotency key also serves lookups by transfer id.
  UNIQUE (result_id, source, event)
);

-- Each index is one more B-tree page written per commit on the ingest path: only lookups operators use.
-- Event-name and source filters scan newest-first by id (few distinct values, most rows match).
CREATE INDEX events_checkout_id ON events (checkout_id, id);
CREATE INDEX events_email_id ON events (email, id);
CREATE INDEX events_wallet_id ON events (wallet_address, id);
CREATE INDEX events_received_at ON events (received_at, id);

-- One row that readiness checks rewrite, proving the store can still commit.
CREATE TABLE store_health (
  id         INTEGER PRIMARY KEY CHECK (id = 1),
  checked_at INTEGER NOT NULL
);
