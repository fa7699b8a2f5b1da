-- Every rule set that was ever loaded, by its hash: a delivery is sent with the rule version it was planned
-- with, and a replay can route an event the way it was routed when it arrived. `rules` is a JSON array of
-- the rules as written in their files (`${ENV}` references unresolved, literal secrets left out). `kind`:
-- `loaded` for the rule files, `one-off` for a single destination an operator sent an edited event to.
CREATE TABLE rule_sets (
  hash            TEXT    PRIMARY KEY,
  kind            TEXT    NOT NULL CHECK (kind IN ('loaded', 'one-off')),
  rules           TEXT    NOT NULL,
  first_loaded_at INTEGER NOT NULL
) WITHOUT ROWID;

-- Events gain the hash of the rule set that routed them, and edited copies: an operator's edit of a stored
-- event, stored as a new event linked to its original. A copy carries its original's transfer id, so the
-- idempotency key gains edit_number: 0 for every received event (a real repeat of the original is still a
-- duplicate), 1, 2, ... for the copies of one transfer. SQLite cannot change a table's constraints in place,
-- so the table is rebuilt (migrate() turns foreign keys off around migrations and checks them before each
-- commit); the key keeps transfer_id first, so it still serves lookups by transfer id.
CREATE TABLE events_rebuilt (
  id               INTEGER PRIMARY KEY,
  source           TEXT    NOT NULL,
  event            TEXT    NOT NULL,
  transfer_id      TEXT    NOT NULL,
  checkout_id      TEXT,
  email            TEXT COLLATE NOCASE,
  wallet_address   TEXT COLLATE NOCASE,
  -- invalid: an edited copy the operator stored on purpose although it fails the event schema
  validation       TEXT    NOT NULL CHECK (validation IN ('valid', 'unrecognised', 'invalid')),
  received_at      INTEGER NOT NULL,  -- unix ms of the first delivery (an edited copy: when it was made)
  last_received_at INTEGER NOT NULL,  -- unix ms of the latest (possibly duplicate) delivery
  received_count   INTEGER NOT NULL DEFAULT 1,
  headers          TEXT    NOT NULL,  -- JSON object of received headers, credentials removed
  body             BLOB    NOT NULL,
  imported_at      INTEGER,
  rule_set_hash    TEXT,              -- the rule set that routed it; NULL before rule sets were kept
  edit_number      INTEGER NOT NULL DEFAULT 0,
  edited_from      INTEGER,           -- an edited copy: its original's id (no foreign key: retention may prune it)
  edited_at        INTEGER,           -- an edited copy: when it was made; NULL for every received event
  edited_via       TEXT CHECK (edited_via IN ('console', 'cli', 'api')),
  UNIQUE (transfer_id, source, event, edit_number)
);

INSERT INTO events_rebuilt (id, source, event, transfer_id, checkout_id, email, wallet_address, validation, received_at,
                            last_received_at, received_count, headers, body, imported_at)
  SELECT id, source, event, transfer_id, checkout_id, email, wallet_address, validation, received_at,
         last_received_at, received_count, headers, body, imported_at
  FROM events;

DROP TABLE events;
ALTER TABLE events_rebuilt RENAME TO events;

CREATE INDEX events_checkout_id ON events (checkout_id, id);
CREATE INDEX events_email_id ON events (email, id);
CREATE INDEX events_wallet_id ON events (wallet_address, id);
CREATE INDEX events_other_event_id ON events (event, id) WHERE event <> 'transfer:succeeded';
CREATE INDEX events_other_source_id ON events (source, id) WHERE source <> 'checkout';
CREATE INDEX events_unrecognised_id ON events (id) WHERE validation = 'unrecognised';
CREATE INDEX events_invalid_id ON events (id) WHERE validation = 'invalid';
CREATE INDEX events_received_at ON events (received_at, id, imported_at);
-- The edited copies of one event, newest first (its page lists them).
CREATE INDEX events_edited_from ON events (edited_from, id) WHERE edited_from IS NOT NULL;

-- What a bulk replay did beyond its counters (JSON, null for other jobs): its routing mode, whether it was a
-- dry run, deliveries per rule, rules withheld, events whose original routing is unknown, and a sample.
ALTER TABLE admin_jobs ADD COLUMN summary TEXT;
