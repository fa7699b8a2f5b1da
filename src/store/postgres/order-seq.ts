/** The back place of an ordered row's key (join-back.ts): a later row, or one rejoining, always draws a higher number, on any node. */
export const NEXT_ORDER_SEQ = "CASE WHEN order_key IS NULL THEN NULL ELSE nextval('delivery_order_seq') END";
