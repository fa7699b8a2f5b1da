import { describe, expect, it } from 'vitest';
import { clientKey, FailedAuthLimiter } from '../../../src/admin/failed-auth-limiter.js';

describe('FailedAuthLimiter', () => {
  it('allows max failures in the window, then asks to wait until the oldest one leaves it', () => {
    let now = 1_000_000;
    const limiter = new FailedAuthLimiter({ max: 3, windowMs: 60_000 }, () => now);
    for (let i = 0; i < 3; i++) {
      expect(limiter.retryAfterSeconds('a')).toBe(0);
      limiter.recordFailure('a');
      now += 10_000;
    }
    // Failures at 0 s, 10 s, 20 s; it is 30 s now: the first leaves the window at 60 s.
    expect(limiter.retryAfterSeconds('a')).toBe(30);
    expect(limiter.retryAfterSeconds('b')).toBe(0);
    now += 30_000;
    expect(limiter.retryAfterSeconds('a')).toBe(0);
    limiter.recordFailure('a');
    expect(limiter.retryAfterSeconds('a')).toBe(10);
  });

  it('keeps at most maxClients addresses, forgetting the one that failed least recently', () => {
    const limiter = new FailedAuthLimiter({ max: 1, windowMs: 60_000 }, () => 0, 3);
    for (const key of ['a', 'b', 'c']) limiter.recordFailure(key);
    limiter.recordFailure('a');
    limiter.recordFailure('d');
    expect(limiter.trackedClients).toBe(3);
    expect(limiter.retryAfterSeconds('b')).toBe(0);
    for (const key of ['a', 'c', 'd']) expect(limiter.retryAfterSeconds(key), key).toBe(60);
    for (let i = 0; i < 10_000; i++) limiter.recordFailure(`x${i}`);
    expect(limiter.trackedClients).toBe(3);
  });

  it('counts an IPv6 client per /64 and an IPv4-mapped address as IPv4', () => {
    expect(clientKey('2001:db8:1:2:aaaa::1')).toBe(clientKey('2001:db8:1:2:bbbb::2'));
    expect(clientKey('2001:db8:1:2::1')).not.toBe(clientKey('2001:db8:1:3::1'));
    expect(clientKey('::ffff:203.0.113.5')).toBe('203.0.113.5');
    expect(clientKey('203.0.113.5')).toBe('203.0.113.5');
  });
});
