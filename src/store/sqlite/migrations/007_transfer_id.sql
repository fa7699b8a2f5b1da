-- One name per concept: the API, the CLI and the store all call `result.id` the transfer id.
-- SQLite rewrites the unique key and every index that names the column.
ALTER TABLE events RENAME COLUMN result_id TO transfer_id;
