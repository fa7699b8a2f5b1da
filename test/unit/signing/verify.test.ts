import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import type { SourceConfig } from '../../../src/config.js';
import { HookrelayError } from '../../../src/errors.js';
import { verifySignature } from '../../../src/signing/verify-signature.js';
import { signHmacSha256Hex, verifyHmacSha256Hex } from '../../../src/signing/hmac-sha256-hex.js';

const body = Buffer.from('{"event":"transfer:succeeded"}');

describe('hmac-sha256-hex', () => {
  it('is the lower-case hex HMAC-SHA256 of the raw body', () => {
    // Independent reference: RFC 4231 test case 2.
    expect(signHmacSha256Hex('Jefe', 'what do ya want for nothing?')).toBe('5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843');
  });

  it.each([
    ['plain hex', (s: string) => s, true],
    ['sha256= prefix', (s: string) => `sha256=${s}`, true],
    ['upper-case hex', (s: string) => s.toUpperCase(), true],
    ['surrounding spaces', (s: string) => ` ${s} `, true],
    ['one byte short', (s: string) => s.slice(2), false],
    ['one byte long', (s: string) => `${s}00`, false],
    ['flipped digit', (s: string) => (s[0] === 'a' ? 'b' : 'a') + s.slice(1), false],
    ['not hex', () => 'z'.repeat(64), false],
  ])('verifies %s: %s', (_name, mutate, expected) => {
    expect(verifyHmacSha256Hex(['k'], body, mutate(signHmacSha256Hex('k', body)))).toBe(expected);
  });

  it('accepts any of several secrets (rotation)', () => {
    const signature = signHmacSha256Hex('old', body);
    expect(verifyHmacSha256Hex(['new', 'old'], body, signature)).toBe(true);
    expect(verifyHmacSha256Hex(['new'], body, signature)).toBe(false);
  });
});

describe('standard-webhooks verification', () => {
  // The test vector published with the Standard Webhooks specification.
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const vectorBody = Buffer.from('{"test": 2432232314}');
  const vectorHeaders = { 'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek', 'webhook-timestamp': '1614265330', 'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=' };
  const source: SourceConfig = { name: 'std', scheme: 'standard-webhooks', secrets: [secret], signatureHeader: 'x-service-signature', toleranceSeconds: 300 };
  const at = 1614265330 * 1000;

  it('accepts the specification vector', () => {
    expect(() => verifySignature(source, vectorHeaders, vectorBody, at)).not.toThrow();
    expect(new Webhook(secret).sign(vectorHeaders['webhook-id'], new Date(at), vectorBody)).toBe(vectorHeaders['webhook-signature']);
  });

  it('refuses the vector once outside the tolerance, or with a changed body', () => {
    const code = (fn: () => void) => {
      try {
        fn();
        return 'accepted';
      } catch (err) {
        return (err as HookrelayError).code;
      }
    };
    expect(code(() => verifySignature(source, vectorHeaders, vectorBody, at + 301_000))).toBe('invalid_signature');
    expect(code(() => verifySignature(source, vectorHeaders, vectorBody, at - 301_000))).toBe('invalid_signature');
    expect(code(() => verifySignature(source, vectorHeaders, Buffer.from('{"test": 2432232315}'), at))).toBe('invalid_signature');
    expect(code(() => verifySignature(source, { ...vectorHeaders, 'webhook-signature': '' }, vectorBody, at))).toBe('missing_signature');
  });
});
