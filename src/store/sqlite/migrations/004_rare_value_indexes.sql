-- Event name, source and validation have few values, and the common one of each (transfer:succeeded, the
-- default source "checkout", valid) is on nearly every row. A full (column, id) index on each cost every
-- ingest three more B-tree writes to serve filters that a newest-first walk of the table answers as fast,
-- since most rows match. Only the rows with a rare value are indexed now. Queries name the condition of
-- the partial index word for word (see coarse-columns.ts): that is how SQLite knows it may use it.
DROP INDEX events_event_id;
DROP INDEX events_source_id;
DROP INDEX events_validation_id;

CREATE INDEX events_other_event_id ON events (event, id) WHERE event <> 'transfer:succeeded';
CREATE INDEX events_other_source_id ON events (source, id) WHERE source <> 'checkout';
CREATE INDEX events_unrecognised_id ON events (id) WHERE validation = 'unrecognised';
