import type { ServerResponse } from 'node:http';

const SLOT = Symbol('hookrelay.inFlightSlot');

type Tracked = ServerResponse & { [SLOT]?: number };

/**
 * The responses not yet finished, so that a shutdown can make each of them close its connection when it
 * answers instead of leaving the client a keep-alive socket that is about to go away.
 *
 * A dense array with swap-remove, not a Set. Under a steady stream of requests a Set rebuilds its hash table
 * every few requests, and V8 keeps each replaced table linked to its successor (for iterators) until a full
 * collection. Once one table in that chain was in the old generation, every response added afterwards, with
 * its request and headers, survived each scavenge and was promoted: at 4,000 requests/s that was ten times
 * the promoted bytes and a full collection every 1.3 s, each one a burst of slow requests.
 */
export class InFlightResponses {
  private readonly responses: Tracked[] = [];
  /** One listener for all responses (`this` is the response that closed): nothing allocated per request. */
  private readonly removeOnClose: (this: ServerResponse) => void;

  constructor() {
    const tracker = this;
    this.removeOnClose = function (this: ServerResponse) {
      tracker.remove(this);
    };
  }

  add(res: ServerResponse): void {
    const tracked = res as Tracked;
    tracked[SLOT] = this.responses.length;
    this.responses.push(tracked);
    res.once('close', this.removeOnClose);
  }

  remove(res: ServerResponse): void {
    const tracked = res as Tracked;
    const slot = tracked[SLOT];
    if (slot === undefined || this.responses[slot] !== tracked) return;
    const last = this.responses.pop()!;
    if (last !== tracked) {
      this.responses[slot] = last;
      last[SLOT] = slot;
    }
    tracked[SLOT] = undefined;
  }

  get size(): number {
    return this.responses.length;
  }

  /** Responses whose headers are not written yet will ask the client to close the connection. */
  closeConnectionsWhenAnswered(): void {
    for (const res of this.responses) if (!res.headersSent) res.setHeader('connection', 'close');
  }
}
