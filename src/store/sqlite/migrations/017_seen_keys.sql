-- The ledger of seen keys: every idempotency key (source, event name, transfer id, edit number) stored here,
-- as 16 bytes of its sha256 (src/store/seen-key.ts), with the first event's id and when it was stored (the
-- import time for an imported event). It outlives the events (retention.seenKeysDays): a repeat of a key whose
-- event retention removed is still a duplicate. Keys of events stored before this migration enter the ledger
-- when retention removes their event.
CREATE TABLE seen_keys (
  key      BLOB    PRIMARY KEY,
  event_id INTEGER NOT NULL,  -- no foreign key: the event goes first, the key stays
  seen_at  INTEGER NOT NULL
) WITHOUT ROWID;

CREATE INDEX seen_keys_seen_at ON seen_keys (seen_at);
