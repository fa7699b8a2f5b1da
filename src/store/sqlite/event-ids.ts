/**
 * The id the next stored event takes: above every stored event and every removed one (`event_id_floor`,
 * migration 018), so that an id is never given twice. Every insert into `events` that makes a new event names
 * its id with this; a copy keeps the source's ids.
 */
export const NEXT_EVENT_ID_SQL = `
  SELECT max(coalesce((SELECT max(id) FROM events), 0), (SELECT floor FROM event_id_floor WHERE id = 1)) + 1 AS id`;
