-- Where a node's admin API answers, so a command on a machine of the cluster can find a running node of
-- this database without its runtime file. Null until the node listens, and for nodes of earlier versions
-- during a rolling upgrade. SQLite has one node per data dir, found by the runtime file there.
ALTER TABLE nodes ADD COLUMN url text;
