-- The ledger of seen keys: every idempotency key (source, event name, transfer id, edit number) stored here,
-- as 16 bytes of its sha256 (src/store/seen-key.ts), with the first event's id and when it was stored (the
-- import time for an imported event). It outlives the events (retention.seenKeysDays): a repeat of a key whose
-- event retention removed is still a duplicate.
CREATE TABLE seen_keys (
  key      BLOB    PRIMARY KEY,
  event_id INTEGER NOT NULL,  -- no foreign key: the event goes first, the key stays
  seen_at  INTEGER NOT NULL
) WITHOUT ROWID;

CREATE INDEX seen_keys_seen_at ON seen_keys (seen_at);

-- Keys of the events stored before this migration are put in the ledger by retention passes, a batch at a
-- time from next_event_id up to below_event_id, so that starting after this migration is not held up by a
-- read of every stored event. Until then retention also records an event's key as it removes it.
CREATE TABLE seen_keys_backfill (
  id             INTEGER PRIMARY KEY CHECK (id = 1),
  next_event_id  INTEGER NOT NULL,
  below_event_id INTEGER NOT NULL
);
INSERT INTO seen_keys_backfill (id, next_event_id, below_event_id) SELECT 1, coalesce(min(id), 0), coalesce(max(id), 0) + 1 FROM events;
