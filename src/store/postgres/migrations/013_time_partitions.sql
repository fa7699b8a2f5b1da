-- Time-partitioned history (docs/scaling.md, "Partitions"): events, settled deliveries (delivery_history) and
-- delivery_attempts become tables partitioned by range of written_at, the unix ms when the event was written
-- (its import time for an imported event, as retention counts age). A delivery and its attempts carry their
-- event's written_at, so an event's partition holds its settled deliveries and attempts and all three are
-- dropped together. Retention drops whole partitions instead of deleting rows; the store creates partitions
-- ahead (partitions.ts).
--
-- Pending deliveries, the claimable queue, live apart in pending_deliveries, a plain table: a claim never
-- plans or touches a partition, and a partition holds no pending row. A delivery moves to delivery_history
-- when it settles (delivered or dead) and back when it is retried. The view deliveries is both, for reads.
--
-- The rows stored before this migration are not copied: each table is renamed *_legacy, given written_at = 0
-- and attached as the partition of everything before 1 (ms), which retention empties by batched deletes and
-- then drops; only pending deliveries (few) move to the new table. What it costs: one scan of each table (the
-- bound's check) and one index build per table (the primary key gains written_at), about 10 s per million
-- events with their deliveries and attempts on a 2-core machine, all inside this transaction.
--
-- A partitioned table holds no unique key without its partition key: (transfer_id, source, event,
-- edit_number) is unique through the ledger of seen keys only (migration 012), and the foreign keys between
-- the tables (and from delivery_redrives) give way to co-partitioning: the store deletes an event's
-- deliveries, attempts and redrives with it. A node of a previous version inserts with ON CONFLICT on the
-- events' unique key, which no longer exists: this is a stop-all upgrade (docs/operations.md, "Upgrading"),
-- refused while another node is live.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM nodes WHERE last_heartbeat > (extract(epoch FROM clock_timestamp()) * 1000)::bigint - 3 * heartbeat_ms) THEN
    RAISE EXCEPTION 'schema migration 013 (time partitions) needs every node stopped: stop them all, start one node of this version, then the others (docs/operations.md, "Upgrading")'
      USING ERRCODE = 'object_in_use';
  END IF;
END
$$;

ALTER TABLE deliveries DROP CONSTRAINT deliveries_event_id_fkey;
ALTER TABLE delivery_attempts DROP CONSTRAINT delivery_attempts_delivery_id_fkey;
ALTER TABLE delivery_redrives DROP CONSTRAINT delivery_redrives_delivery_id_fkey;
DROP TRIGGER events_seen_keys ON events;
ALTER TABLE events DROP CONSTRAINT events_transfer_key;

-- The legacy partitions: written_at 0 everywhere (a constant default rewrites no row), checked once.
ALTER TABLE events RENAME TO events_legacy;
ALTER TABLE deliveries RENAME TO delivery_history_legacy;
ALTER TABLE delivery_attempts RENAME TO delivery_attempts_legacy;
ALTER TABLE events_legacy ADD COLUMN written_at bigint NOT NULL DEFAULT 0, ADD CONSTRAINT events_legacy_written_at CHECK (written_at < 1);
ALTER TABLE delivery_history_legacy ADD COLUMN written_at bigint NOT NULL DEFAULT 0, ADD CONSTRAINT delivery_history_legacy_written_at CHECK (written_at < 1);
ALTER TABLE delivery_attempts_legacy ADD COLUMN written_at bigint NOT NULL DEFAULT 0, ADD CONSTRAINT delivery_attempts_legacy_written_at CHECK (written_at < 1);

-- Ids go on from where the identities were, in sequences of the new tables (no identity columns on
-- partitioned tables in PostgreSQL 15); every stored id is kept. Both delivery tables share one sequence.
CREATE TEMPORARY TABLE last_ids ON COMMIT DROP AS SELECT
  greatest(coalesce(pg_sequence_last_value(pg_get_serial_sequence('events_legacy', 'id')::regclass), 0), (SELECT coalesce(max(id), 0) FROM events_legacy)) AS events,
  greatest(coalesce(pg_sequence_last_value(pg_get_serial_sequence('delivery_history_legacy', 'id')::regclass), 0), (SELECT coalesce(max(id), 0) FROM delivery_history_legacy)) AS deliveries,
  greatest(coalesce(pg_sequence_last_value(pg_get_serial_sequence('delivery_attempts_legacy', 'id')::regclass), 0), (SELECT coalesce(max(id), 0) FROM delivery_attempts_legacy)) AS attempts;
ALTER TABLE events_legacy ALTER COLUMN id DROP IDENTITY;
ALTER TABLE delivery_history_legacy ALTER COLUMN id DROP IDENTITY;
ALTER TABLE delivery_attempts_legacy ALTER COLUMN id DROP IDENTITY;
CREATE SEQUENCE events_id_seq;
CREATE SEQUENCE deliveries_id_seq;
CREATE SEQUENCE delivery_attempts_id_seq;
-- 0: none given yet, the next is 1.
SELECT setval('events_id_seq', greatest(events, 1), events > 0), setval('deliveries_id_seq', greatest(deliveries, 1), deliveries > 0),
  setval('delivery_attempts_id_seq', greatest(attempts, 1), attempts > 0) FROM last_ids;

-- A partition holds one primary key, its table's (id, written_at), built when it is attached; it serves
-- lookups by id as the old one did. The attempts' unique key gains written_at likewise.
ALTER TABLE events_legacy DROP CONSTRAINT events_pkey;
ALTER TABLE delivery_history_legacy DROP CONSTRAINT deliveries_pkey;
ALTER TABLE delivery_attempts_legacy DROP CONSTRAINT delivery_attempts_pkey;
DROP INDEX delivery_attempts_once;

-- The claimable queue: the same columns, defaults and checks, with the pending rows stored so far.
CREATE TABLE pending_deliveries (LIKE delivery_history_legacy INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
ALTER TABLE pending_deliveries DROP CONSTRAINT delivery_history_legacy_written_at;
ALTER TABLE pending_deliveries ADD PRIMARY KEY (id), ADD CONSTRAINT pending_deliveries_pending CHECK (state = 'pending');
INSERT INTO pending_deliveries SELECT * FROM delivery_history_legacy WHERE state = 'pending';
DELETE FROM delivery_history_legacy WHERE state = 'pending';
ALTER TABLE delivery_history_legacy ADD CONSTRAINT delivery_history_settled CHECK (state <> 'pending');

-- The partitioned tables: the same columns, defaults and checks (LIKE), the legacy bound's check left out.
CREATE TABLE events (LIKE events_legacy INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE (written_at);
ALTER TABLE events DROP CONSTRAINT events_legacy_written_at;
CREATE TABLE delivery_history (LIKE delivery_history_legacy INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE (written_at);
ALTER TABLE delivery_history DROP CONSTRAINT delivery_history_legacy_written_at;
CREATE TABLE delivery_attempts (LIKE delivery_attempts_legacy INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE (written_at);
ALTER TABLE delivery_attempts DROP CONSTRAINT delivery_attempts_legacy_written_at;
-- An event written without naming its time is written now; a delivery or attempt must name its event's.
ALTER TABLE events ALTER COLUMN written_at SET DEFAULT (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
ALTER TABLE delivery_history ALTER COLUMN written_at DROP DEFAULT;
ALTER TABLE pending_deliveries ALTER COLUMN written_at DROP DEFAULT;
ALTER TABLE delivery_attempts ALTER COLUMN written_at DROP DEFAULT;
ALTER TABLE events ALTER COLUMN id SET DEFAULT nextval('events_id_seq');
ALTER SEQUENCE events_id_seq OWNED BY events.id;
ALTER TABLE delivery_history ALTER COLUMN id SET DEFAULT nextval('deliveries_id_seq');
ALTER TABLE pending_deliveries ALTER COLUMN id SET DEFAULT nextval('deliveries_id_seq');
ALTER SEQUENCE deliveries_id_seq OWNED BY delivery_history.id;
ALTER TABLE delivery_attempts ALTER COLUMN id SET DEFAULT nextval('delivery_attempts_id_seq');
ALTER SEQUENCE delivery_attempts_id_seq OWNED BY delivery_attempts.id;

ALTER TABLE events ADD PRIMARY KEY (id, written_at);
-- The events' unique key goes (above), not the lookups by transfer id its index served (searches, edit numbers,
-- the legacy partition's keys not in the ledger yet): the same columns, not unique.
CREATE INDEX events_transfer ON events (transfer_id, source, event, edit_number);
ALTER TABLE delivery_history ADD PRIMARY KEY (id, written_at);
ALTER TABLE delivery_attempts ADD PRIMARY KEY (id, written_at);
CREATE UNIQUE INDEX delivery_attempts_once ON delivery_attempts (delivery_id, lease_token, attempt, written_at);

-- Every other index keeps the definition the migration that made it gave it: copied here from the legacy
-- table (which keeps it under *_legacy, taken over as the partition's when attached) onto the partitioned
-- table, under its name. A delivery index goes where its rows are: one over pending rows only to
-- pending_deliveries (and out of the legacy table, which holds none), one over settled rows only to the
-- history, one over all to both (pending_deliveries' named pending_*).
DO $$
DECLARE
  ix record;
  tail text;
  target text;
BEGIN
  FOR ix IN
    SELECT c.relname AS name, t.relname AS tbl, pg_get_indexdef(c.oid) AS def, coalesce(pg_get_expr(i.indpred, i.indrelid), '') AS pred
    FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
    WHERE t.relname IN ('events_legacy', 'delivery_history_legacy', 'delivery_attempts_legacy')
      AND t.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
      AND NOT i.indisunique
  LOOP
    tail := substring(ix.def FROM ' USING .*$');
    target := replace(ix.tbl, '_legacy', '');
    IF ix.tbl = 'delivery_history_legacy' AND ix.pred <> '' AND ix.pred NOT LIKE '%<>%' AND ix.pred LIKE '%''pending''%' THEN
      EXECUTE format('CREATE INDEX %I ON pending_deliveries', 'pending_' || ix.name) || tail;
      EXECUTE format('DROP INDEX %I', ix.name);
      CONTINUE;
    END IF;
    IF ix.tbl = 'delivery_history_legacy' AND ix.pred = '' THEN
      EXECUTE format('CREATE INDEX %I ON pending_deliveries', 'pending_' || ix.name) || tail;
    END IF;
    EXECUTE format('ALTER INDEX %I RENAME TO %I', ix.name, ix.name || '_legacy');
    EXECUTE format('CREATE INDEX %I ON %I', ix.name, target) || tail;
  END LOOP;
END
$$;

ALTER TABLE events ATTACH PARTITION events_legacy FOR VALUES FROM (MINVALUE) TO (1);
ALTER TABLE delivery_history ATTACH PARTITION delivery_history_legacy FOR VALUES FROM (MINVALUE) TO (1);
ALTER TABLE delivery_attempts ATTACH PARTITION delivery_attempts_legacy FOR VALUES FROM (MINVALUE) TO (1);

-- Reads of deliveries (lists, explain, counts, exports) see both tables, and each check tells the planner
-- which one a state holds; writes name their table.
CREATE VIEW deliveries AS SELECT * FROM pending_deliveries UNION ALL SELECT * FROM delivery_history;

CREATE TRIGGER events_seen_keys AFTER INSERT ON events
  REFERENCING NEW TABLE AS stored
  FOR EACH STATEMENT EXECUTE FUNCTION hookrelay_record_seen_keys();
