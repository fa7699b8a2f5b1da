/** The received headers of a stored event, without its body: what a rule's `forwardHeaders` passes on. */
export interface EventHeadersStore {
  /** The event's stored headers (credentials removed at ingest), or null when it is no longer stored. */
  getEventHeaders(eventId: number): Promise<Record<string, string> | null>;
}
