-- The ledger of seen keys, as SQLite's migration 017: every idempotency key (source, event name, transfer id,
-- edit number) stored here, with the first event's id and when it was stored (the import time for an imported
-- event). It outlives the events (retention.seenKeysDays): a repeat of a key whose event retention removed is
-- still a duplicate. The key is a uuid (16 bytes, fixed size, no length header) made of the first half of a
-- sha256 (src/store/seen-key.ts computes the same): about 120 MB per million keys, table and indexes, half of
-- what the text columns would take (docs/scaling.md). Its own retention deletes the oldest in short batches
-- along the index on seen_at (appended in time order, so its pages stay full); the space they leave is reused
-- by new keys instead of growing the table.
CREATE FUNCTION hookrelay_seen_key(source text, event text, transfer_id text, edit_number integer) RETURNS uuid
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$
    SELECT encode(substring(sha256(convert_to(
      octet_length(convert_to(source, 'UTF8')) || ':' || source ||
      octet_length(convert_to(event, 'UTF8')) || ':' || event ||
      octet_length(convert_to(transfer_id, 'UTF8')) || ':' || transfer_id || edit_number, 'UTF8')) FROM 1 FOR 16), 'hex')::uuid
  $$;

CREATE TABLE seen_keys (
  key      uuid   PRIMARY KEY,
  event_id bigint NOT NULL,  -- no foreign key: the event goes first, the key stays
  seen_at  bigint NOT NULL
);

CREATE INDEX seen_keys_seen_at ON seen_keys (seen_at);

-- Keys of the events stored before this migration are put in the ledger by retention passes, a batch at a
-- time from next_event_id up to below_event_id (the events after it get theirs from the trigger below), so
-- the migration itself reads no events. Until then retention also records an event's key as it removes it.
CREATE TABLE seen_keys_backfill (
  id             integer PRIMARY KEY CHECK (id = 1),
  next_event_id  bigint  NOT NULL,
  below_event_id bigint  NOT NULL
);
INSERT INTO seen_keys_backfill (id, next_event_id, below_event_id) SELECT 1, coalesce(min(id), 0), coalesce(max(id), 0) + 1 FROM events;

-- Every statement that stores events records their keys, whichever hookrelay version runs it: nodes of the
-- previous version (which insert with ON CONFLICT on the events' unique key) keep the ledger complete during a
-- rolling upgrade. A key the ledger holds for another event (one retention removed) fails the statement: the
-- event is a repeat and must not be stored again (this version checks the ledger first; a node of the previous
-- version answers 503 and the sender tries again, until that node is upgraded).
CREATE FUNCTION hookrelay_record_seen_keys() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
  DECLARE
    clashes integer;
  BEGIN
    WITH written AS (
      -- hookrelay_seen_key written out: a call per row of an SQL function costs twice the hash itself.
      INSERT INTO seen_keys AS k (key, event_id, seen_at)
      SELECT encode(substring(sha256(convert_to(
               octet_length(convert_to(s.source, 'UTF8')) || ':' || s.source ||
               octet_length(convert_to(s.event, 'UTF8')) || ':' || s.event ||
               octet_length(convert_to(s.transfer_id, 'UTF8')) || ':' || s.transfer_id || s.edit_number, 'UTF8')) FROM 1 FOR 16), 'hex')::uuid,
             s.id, coalesce(s.imported_at, s.received_at)
      FROM stored s ORDER BY 1
      ON CONFLICT (key) DO UPDATE SET key = excluded.key WHERE k.event_id <> excluded.event_id
      RETURNING k.xmax <> 0 AS clash
    ) SELECT count(*) INTO clashes FROM written WHERE clash;
    IF clashes > 0 THEN
      RAISE EXCEPTION 'an event with this key was stored before and removed by retention: a repeat'
        USING ERRCODE = 'unique_violation', CONSTRAINT = 'seen_keys_pkey';
    END IF;
    RETURN NULL;
  END
  $$;

CREATE TRIGGER events_seen_keys AFTER INSERT ON events
  REFERENCING NEW TABLE AS stored
  FOR EACH STATEMENT EXECUTE FUNCTION hookrelay_record_seen_keys();
