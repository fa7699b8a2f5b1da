-- Event streams read new events in commit order. Ids come from a sequence when a row is written, not when
-- its transaction commits, so a transaction holding id 100 may commit after one holding id 101; a reader
-- that had moved past 101 would skip 100. Each event records the transaction that wrote it, and readers
-- take only events whose transaction is older than every transaction still open, in (tx, id) order.
--
-- pg_current_xact_id() is stable, so the default is evaluated once here: the rows already stored get this
-- migration's transaction id without a rewrite of the table (they all committed before it). Nodes of the
-- previous version insert without naming the column and get the default too.
ALTER TABLE events ADD COLUMN tx xid8 NOT NULL DEFAULT pg_current_xact_id();

CREATE INDEX events_tx_id ON events (tx, id);
