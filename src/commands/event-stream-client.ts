import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { request } from 'undici';
import { apiError } from './admin-client.js';

export type StreamMessage = EventSourceMessage;

export interface OpenStreamOptions {
  /** Full URL of GET /admin/api/events/stream, query included. */
  url: string;
  token: string;
  /** Resume after this event id (`Last-Event-ID`). */
  lastEventId?: string;
  signal?: AbortSignal;
  /** Called once the server has accepted the stream. */
  onOpen?: () => void;
}

/**
 * Reads the admin API's event stream, message by message (heartbeats are left out). Ends when the server
 * ends the stream; throws the API's typed error for a refused request and the network error for a lost one.
 */
export async function* readEventStream(options: OpenStreamOptions): AsyncGenerator<StreamMessage> {
  const response = await request(options.url, {
    method: 'GET',
    headers: {
      authorization: `Bearer ${options.token}`,
      accept: 'text/event-stream',
      ...(options.lastEventId !== undefined && { 'last-event-id': options.lastEventId }),
    },
    // Heartbeats arrive far more often than this; silence this long means the connection is gone.
    bodyTimeout: 120_000,
    signal: options.signal,
  });
  if (response.statusCode !== 200) {
    const text = await response.body.text();
    let json: unknown = null;
    try {
      json = JSON.parse(text);
    } catch {
      // not JSON: the status alone says what went wrong
    }
    throw apiError(response.statusCode, json);
  }
  options.onOpen?.();
  const queue: StreamMessage[] = [];
  const parser = createParser({ onEvent: (message) => queue.push(message) });
  // A character split across two chunks is decoded once both have arrived.
  const decoder = new TextDecoder();
  for await (const chunk of response.body as AsyncIterable<Buffer>) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    while (queue.length > 0) yield queue.shift()!;
  }
}
