import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { deliveryHeaders, forwardedHeaders } from '../../../src/signing/delivery-headers.js';
import { verifyHmacSha256Hex } from '../../../src/signing/hmac-sha256-hex.js';

const body = '{"event":"transfer:succeeded","result":{"id":"tr_1","note":"café ✓"}}';
const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('deliveryHeaders', () => {
  it('none: only the identity headers', () => {
    const timestamp = new Date('2025-01-01T00:00:00.900Z');
    expect(deliveryHeaders({ signing: { scheme: 'none' }, deliveryId: 'dlv_1', eventId: 7, ruleId: 'fulfil', timestamp, body })).toEqual({
      'X-Hookrelay-Delivery': 'dlv_1',
      'X-Hookrelay-Event-Id': '7',
      'X-Hookrelay-Rule': 'fulfil',
      'X-Hookrelay-Timestamp': '1735689600',
      'webhook-id': 'dlv_1',
    });
  });

  it('standard-webhooks: the standardwebhooks package verifies what we produce', () => {
    const headers = deliveryHeaders({ signing: { scheme: 'standard-webhooks', secret }, deliveryId: 'dlv_2', timestamp: new Date(), body });
    expect(headers['webhook-id']).toBe('dlv_2');
    expect(headers['X-Hookrelay-Delivery']).toBe('dlv_2');
    expect(headers['webhook-timestamp']).toMatch(/^\d+$/);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('standard-webhooks: signs bytes as the same text, and the wrong secret fails verification', () => {
    const bytes = new TextEncoder().encode(body);
    const headers = deliveryHeaders({ signing: { scheme: 'standard-webhooks', secret }, deliveryId: 'dlv_3', timestamp: new Date(), body: bytes });
    expect(() => new Webhook(secret).verify(Buffer.from(bytes), headers)).not.toThrow();
    expect(() => new Webhook('whsec_' + Buffer.from('another secret').toString('base64')).verify(body, headers)).toThrow();
  });

  it('standard-webhooks: the id stays, the timestamp and signature follow the attempt time', () => {
    const signing = { scheme: 'standard-webhooks', secret } as const;
    const first = deliveryHeaders({ signing, deliveryId: 'dlv_4', timestamp: new Date('2025-01-01T00:00:00.900Z'), body });
    const retry = deliveryHeaders({ signing, deliveryId: 'dlv_4', timestamp: new Date('2025-01-01T00:05:00Z'), body });
    expect(first['webhook-timestamp']).toBe('1735689600');
    expect(retry['webhook-timestamp']).toBe('1735689900');
    expect(retry['webhook-id']).toBe(first['webhook-id']);
    expect(retry['webhook-signature']).not.toBe(first['webhook-signature']);
  });

  it('standard-webhooks: refuses bodies that are not UTF-8 and secrets that are not base64', () => {
    const signing = { scheme: 'standard-webhooks', secret } as const;
    expect(() => deliveryHeaders({ signing, deliveryId: 'd', timestamp: new Date(), body: new Uint8Array([0xff, 0xfe]) })).toThrow();
    expect(() => deliveryHeaders({ signing: { scheme: 'standard-webhooks', secret: 'not base64!' }, deliveryId: 'd', timestamp: new Date(), body })).toThrow(/base64/);
  });

  it('hmac-sha256-hex: default header, exactly as the checkout service signs', () => {
    const headers = deliveryHeaders({ signing: { scheme: 'hmac-sha256-hex', secret: 's3cret' }, deliveryId: 'dlv_5', timestamp: new Date(), body });
    expect(headers['X-Service-Signature']).toMatch(/^[0-9a-f]{64}$/);
    expect(verifyHmacSha256Hex(['s3cret'], new TextEncoder().encode(body), headers['X-Service-Signature']!)).toBe(true);
    expect(headers['webhook-id']).toBe('dlv_5');
    expect(headers['X-Hookrelay-Delivery']).toBe('dlv_5');
  });

  it('hmac-sha256-hex: custom header name', () => {
    const headers = deliveryHeaders({ signing: { scheme: 'hmac-sha256-hex', secret: 's3cret', header: 'X-Signature' }, deliveryId: 'd', timestamp: new Date(), body });
    expect(Object.keys(headers).sort()).toEqual(['X-Hookrelay-Delivery', 'X-Hookrelay-Timestamp', 'X-Signature', 'webhook-id']);
  });
});

describe('forwardedHeaders', () => {
  it('picks the named received headers the event has', () => {
    expect(forwardedHeaders({ 'x-service-signature': 'ab12', 'x-trace': 't', host: 'h' }, ['x-service-signature', 'x-missing'])).toEqual({ 'x-service-signature': 'ab12' });
  });
});
