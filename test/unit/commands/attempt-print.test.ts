import { afterEach, describe, expect, it, vi } from 'vitest';
import { printEventDetail } from '../../../src/commands/admin-print.js';
import type { EventWithDeliveries } from '../../../src/operations/browse.js';

afterEach(() => vi.restoreAllMocks());

function printed(detail: EventWithDeliveries): string {
  let out = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  printEventDetail(detail);
  return out;
}

const attempt = { startedAt: '2026-11-28T10:00:00.000Z', durationMs: 3, urlOrigin: 'http://127.0.0.1:9', responseExcerpt: null };

describe('events show: the attempt log', () => {
  it('says an attempt without a status was not sent (refused connection) or sent with no response (timeout)', () => {
    const detail = {
      event: { id: 1, headers: {}, body: '{}' },
      deliveries: [
        {
          id: 7, ruleId: 'sink', state: 'dead', origin: 'ingest', attempts: 2, deadReason: 'gave up', pausedReason: null,
          attemptLog: [
            { ...attempt, attempt: 1, status: null, errorCode: 'ECONNREFUSED', errorMessage: 'connect ECONNREFUSED 127.0.0.1:9', sent: false, outcome: 'pending' },
            { ...attempt, attempt: 2, status: null, errorCode: 'timeout', errorMessage: 'no answer within 200 ms', sent: true, outcome: 'dead' },
          ],
          redrives: [],
        },
      ],
    } as unknown as EventWithDeliveries;
    const lines = printed(detail).split('\n').filter((line) => line.trim().startsWith('#'));
    expect(lines).toEqual([
      expect.stringMatching(/^ +#1 .* http:\/\/127\.0\.0\.1:9 not sent, ECONNREFUSED: connect ECONNREFUSED 127\.0\.0\.1:9 3 ms → pending$/),
      expect.stringMatching(/^ +#2 .* http:\/\/127\.0\.0\.1:9 no response, timeout: no answer within 200 ms 3 ms → dead$/),
    ]);
  });
});
