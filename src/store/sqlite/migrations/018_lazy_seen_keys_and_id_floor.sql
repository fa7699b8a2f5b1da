-- The ledger of seen keys holds the keys of removed events: retention records each key in the transaction
-- that removes its event, and a stored event's own row (its unique key) answers for it while it is kept.
-- Ingest then only reads the ledger: writing every new key put one more randomly placed page into each
-- group commit. The keys already in the ledger stay (they are still true); the walk that put the keys of
-- events stored before migration 017 into the ledger is no longer needed.
DELETE FROM seen_keys_backfill;

-- Event ids are never given twice. SQLite gives max(id) + 1, so removing the newest event would let the next
-- one take its id, which the ledger, the console's links and downstream systems (X-Hookrelay-Event-Id) still
-- mean for the removed one. Every insert takes its id above this floor, raised by each removal past it.
CREATE TABLE event_id_floor (
  id    INTEGER PRIMARY KEY CHECK (id = 1),
  floor INTEGER NOT NULL
);
INSERT INTO event_id_floor (id, floor)
  SELECT 1, max(coalesce((SELECT max(id) FROM events), 0), coalesce((SELECT max(event_id) FROM seen_keys), 0));

CREATE TRIGGER events_id_floor AFTER DELETE ON events
  WHEN old.id > (SELECT floor FROM event_id_floor WHERE id = 1)
  BEGIN
    UPDATE event_id_floor SET floor = old.id WHERE id = 1;
  END;
