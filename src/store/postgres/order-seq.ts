/** An ordered row's place in its key: a later row (or a retry) always draws a higher number, on any node. */
export const NEXT_ORDER_SEQ = "CASE WHEN order_key IS NULL THEN NULL ELSE nextval('delivery_order_seq') END";
