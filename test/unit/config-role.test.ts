import { describe, expect, it } from 'vitest';
import { loadConfig, nodeRoleOf } from '../../src/config.js';

describe('config: role', () => {
  it('defaults to all; HOOKRELAY_ROLE and the flag set it; anything else is refused naming the setting', () => {
    expect(loadConfig({}).role).toBe('all');
    expect(loadConfig({ HOOKRELAY_ROLE: 'worker' }).role).toBe('worker');
    expect(loadConfig({ HOOKRELAY_ROLE: 'worker' }, { role: 'receiver' }).role).toBe('receiver');
    expect(() => loadConfig({ HOOKRELAY_ROLE: 'sender' })).toThrow(/HOOKRELAY_ROLE/);
  });

  it('delivery.enabled: false is the deprecated spelling of role receiver, and contradicts role worker', () => {
    expect(nodeRoleOf(loadConfig({}, { delivery: { enabled: false } }))).toBe('receiver');
    expect(nodeRoleOf(loadConfig({}, { delivery: { enabled: true } }))).toBe('all');
    expect(nodeRoleOf(loadConfig({ HOOKRELAY_ROLE: 'receiver' }))).toBe('receiver');
    expect(() => loadConfig({ HOOKRELAY_ROLE: 'worker' }, { delivery: { enabled: false } })).toThrow(/contradicts role: worker/);
  });

  it('cluster.heartbeatMs defaults to 5 s and refuses values below 100 ms', () => {
    expect(loadConfig({}).cluster.heartbeatMs).toBe(5_000);
    expect(() => loadConfig({}, { cluster: { heartbeatMs: 10 } })).toThrow(/cluster/);
  });
});
