import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { InFlightResponses } from '../../../src/http/in-flight-responses.js';

function response(): ServerResponse {
  return new ServerResponse(new IncomingMessage(new Socket()));
}

describe('InFlightResponses', () => {
  it('asks only the responses still unanswered to close their connection', () => {
    const tracker = new InFlightResponses();
    const [a, b, c, answered] = [response(), response(), response(), response()];
    for (const res of [a, b, c, answered]) tracker.add(res);
    answered.writeHead(200);
    tracker.remove(b);
    expect(tracker.size).toBe(3);
    tracker.closeConnectionsWhenAnswered();
    expect(a.getHeader('connection')).toBe('close');
    expect(c.getHeader('connection')).toBe('close');
    expect(b.getHeader('connection')).toBeUndefined();
    expect(answered.getHeader('connection')).toBeUndefined();
  });

  it('forgets a response once it closes, whatever the order', () => {
    const tracker = new InFlightResponses();
    const responses = Array.from({ length: 6 }, response);
    for (const res of responses) tracker.add(res);
    for (const index of [0, 5, 2]) responses[index]!.emit('close');
    expect(tracker.size).toBe(3);
    tracker.closeConnectionsWhenAnswered();
    expect(responses.map((res) => res.getHeader('connection') ?? null)).toEqual([null, 'close', null, 'close', 'close', null]);
    for (const index of [1, 3, 4]) responses[index]!.emit('close');
    expect(tracker.size).toBe(0);
  });

  it('ignores a second removal and a response it never tracked', () => {
    const tracker = new InFlightResponses();
    const [kept, removed] = [response(), response()];
    tracker.add(kept);
    tracker.add(removed);
    tracker.remove(removed);
    tracker.remove(removed);
    tracker.remove(response());
    expect(tracker.size).toBe(1);
    tracker.closeConnectionsWhenAnswered();
    expect(kept.getHeader('connection')).toBe('close');
  });

  it('tracks two servers apart', () => {
    const [first, second] = [new InFlightResponses(), new InFlightResponses()];
    const [a, b] = [response(), response()];
    first.add(a);
    second.add(b);
    first.remove(b);
    expect([first.size, second.size]).toEqual([1, 1]);
  });
});
