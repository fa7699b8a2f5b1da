import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { newMessageId, signatureHeaders } from '../../../src/signing/sign.js';

const body = '{"event":"transfer:succeeded","result":{"id":"tr_1","note":"café ✓"}}';
const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('signatureHeaders', () => {
  const message = { id: 'msg_1', timestamp: new Date('2025-01-01T00:00:00Z'), body };

  it('none: no headers', () => {
    expect(signatureHeaders({ scheme: 'none' }, message)).toEqual({});
  });

  it('hmac-sha256-hex: only the signature header, the checkout service\'s unless another is named', () => {
    expect(Object.keys(signatureHeaders({ scheme: 'hmac-sha256-hex', secret: 's3cret' }, message))).toEqual(['X-Service-Signature']);
    expect(Object.keys(signatureHeaders({ scheme: 'hmac-sha256-hex', secret: 's3cret', header: 'X-Signature' }, message))).toEqual(['X-Signature']);
  });

  it('standard-webhooks: the message id and time are the ones signed', () => {
    const headers = signatureHeaders({ scheme: 'standard-webhooks', secret }, message);
    expect(headers).toMatchObject({ 'webhook-id': 'msg_1', 'webhook-timestamp': '1735689600' });
    expect(new Webhook(secret).sign('msg_1', message.timestamp, body)).toBe(headers['webhook-signature']);
  });

  it('newMessageId: a fresh msg_ id each time', () => {
    const [a, b] = [newMessageId(), newMessageId()];
    expect(a).toMatch(/^msg_[0-9a-f-]{36}$/);
    expect(a).not.toBe(b);
  });
});
