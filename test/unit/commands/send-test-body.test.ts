import { describe, expect, it } from 'vitest';
import { buildBody, parseFieldSetting, transferIdOf } from '../../../src/commands/send-test-body.js';
import { localWebhookUrl } from '../../../src/commands/send-test.js';

describe('send-test bodies', () => {
  it('parses --set values as JSON where they parse, else as strings', () => {
    expect(parseFieldSetting('result.totalPriceUsd=150')).toEqual({ path: 'result.totalPriceUsd', value: 150 });
    expect(parseFieldSetting('result.email=ada@example.com')).toEqual({ path: 'result.email', value: 'ada@example.com' });
    expect(parseFieldSetting('result.claimedTokens.tokenIds=["7","8"]')).toEqual({ path: 'result.claimedTokens.tokenIds', value: ['7', '8'] });
    expect(parseFieldSetting('result.note=a=b')).toEqual({ path: 'result.note', value: 'a=b' });
    expect(() => parseFieldSetting('=1')).toThrow('--set needs path=value');
  });

  it('applies settings and the transfer id to the sample, keeping its shape', () => {
    const body = JSON.parse(buildBody({ transferId: 'tr-1', settings: [parseFieldSetting('result.totalPriceUsd=150'), parseFieldSetting('result.claimedTokens.tokenIds.0=9')] }).toString());
    expect(body.event).toBe('transfer:succeeded');
    expect(body.result).toMatchObject({ id: 'tr-1', totalPriceUsd: 150, paymentMethod: 'BUY_WITH_CARD' });
    expect(body.result.claimedTokens.tokenIds[0]).toBe(9);
  });

  it('sends a file byte for byte unless something is set in it', () => {
    const file = Buffer.from('{ "event": "transfer:succeeded",  "result": { "id": "a" } }');
    expect(buildBody({ file, settings: [] })).toBe(file);
    expect(JSON.parse(buildBody({ file, settings: [parseFieldSetting('result.id="b"')] }).toString()).result.id).toBe('b');
    expect(() => buildBody({ file: Buffer.from('nope'), settings: [parseFieldSetting('a=1')] })).toThrow('need a JSON body');
    expect(transferIdOf(file)).toBe('a');
    expect(transferIdOf(Buffer.from('[]'))).toBeUndefined();
  });

  it('finds the local receiver from the host and port settings', () => {
    expect(localWebhookUrl({ host: '0.0.0.0', port: 8080 }, 'checkout')).toBe('http://127.0.0.1:8080/webhooks/checkout');
    expect(localWebhookUrl({ host: '127.0.0.1', port: 9000 }, 'shop')).toBe('http://127.0.0.1:9000/webhooks/shop');
    expect(localWebhookUrl({ host: '::1', port: 8080 }, 'checkout')).toBe('http://[::1]:8080/webhooks/checkout');
  });
});
