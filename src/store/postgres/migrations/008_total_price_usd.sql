-- The amount a seller scans a list for, as SQLite's migration 014: the body's result.totalPriceUsd beside
-- the raw bytes. NULL where the body has no finite number there and for rows a node running the previous
-- version inserts during a rolling upgrade. Expand only: a nullable column added without a default changes
-- no stored row, and the previous version's inserts, which do not name it, go on working.
ALTER TABLE events ADD COLUMN total_price_usd double precision;

-- Events stored before this migration take the amount from their stored bytes (bytea). A body that is not
-- UTF-8 or not JSON (an import may hold one), that holds a \u0000 escape (which PostgreSQL's JSON types
-- refuse), or an amount out of range, leaves NULL instead of failing the migration, hence a function that
-- catches the error per row. It lives in this session's temporary schema, dropped before the commit.
CREATE FUNCTION pg_temp.body_total_price_usd(body bytea) RETURNS double precision LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  amount json;
BEGIN
  amount := convert_from(body, 'UTF8')::json -> 'result' -> 'totalPriceUsd';
  IF json_typeof(amount) = 'number' THEN
    RETURN (amount #>> '{}')::double precision;
  END IF;
  RETURN NULL;
EXCEPTION WHEN others THEN
  RETURN NULL;
END
$$;

-- The migration's transaction holds the events table until it commits: about 4 s per 100,000 stored
-- transfers on a 2-core machine, during which other nodes' reads and writes of events wait (see
-- docs/operations.md, "Upgrading"). Only bodies that name the field are parsed.
UPDATE events SET total_price_usd = pg_temp.body_total_price_usd(body)
WHERE position('"totalPriceUsd"'::bytea IN body) > 0;

DROP FUNCTION pg_temp.body_total_price_usd(bytea);
