import { networkInterfaces } from 'node:os';
import { describe, expect, it } from 'vitest';
import { isThisMachine } from '../../../src/commands/this-machine.js';

describe('isThisMachine', () => {
  it('takes localhost, loopback and unspecified addresses', () => {
    for (const url of ['http://localhost:8080', 'http://127.0.0.1:8080', 'http://127.8.9.1', 'http://[::1]:8080/x', 'http://0.0.0.0:8080', 'http://api.localhost']) {
      expect(isThisMachine(url), url).toBe(true);
    }
  });

  it('takes the addresses of this machine’s interfaces', () => {
    const own = Object.values(networkInterfaces()).flatMap((entries) => entries ?? []).find((entry) => entry.family === 'IPv4');
    expect(own).toBeDefined();
    expect(isThisMachine(`http://${own!.address}:8080`)).toBe(true);
  });

  it('refuses other hosts and what is not a URL', () => {
    for (const url of ['http://192.0.2.10:8080', 'https://hooks.example.com', 'http://[2001:db8::1]/', 'not a url']) {
      expect(isThisMachine(url), url).toBe(false);
    }
  });
});
