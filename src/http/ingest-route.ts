import type { IncomingMessage, ServerResponse } from 'node:http';

/** What the server calls for POST /webhooks/:source: the ingest handler, or a worker's refusal. */
export type IngestHandler = (req: IncomingMessage, res: ServerResponse, sourceName: string, requestId: string) => void;
