import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServeProcess } from '../../helpers/cli-process.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';
import { hookrelay } from './cli-harness.js';

afterAll(() => removeTempDirs());

describe('remote mode on the same machine', { timeout: 60_000 }, () => {
  it('reads the admin token the server generated into its data dir when none is given', async () => {
    const dataDir = makeTempDir();
    const server = await startServeProcess({ HOOKRELAY_DATA_DIR: dataDir, HOOKRELAY_RULES_DIR: makeTempDir(), HOOKRELAY_SECRET: 's' });
    try {
      const viaLoopback = await hookrelay(['events', 'list', '--url', server.url, '--json'], { HOOKRELAY_DATA_DIR: dataDir });
      expect(viaLoopback.stderr).toBe('');
      expect(viaLoopback.json).toEqual({ items: [], nextCursor: null });
      const viaLocalhost = await hookrelay(['deliveries', 'list', '--url', server.url.replace('127.0.0.1', 'localhost'), '--json'], { HOOKRELAY_DATA_DIR: dataDir });
      expect(viaLocalhost.code).toBe(0);
      // An explicit token still wins over the file.
      const wrong = await hookrelay(['events', 'list', '--url', server.url, '--token', 'not-the-token-0000000000'], { HOOKRELAY_DATA_DIR: dataDir });
      expect(wrong.code).toBe(1);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('never hands the local token to another machine', async () => {
    const dataDir = makeTempDir();
    writeFileSync(join(dataDir, 'admin.token'), 'hra_local-only-token\n');
    // 192.0.2.0/24 is reserved for documentation: the command stops before any connection.
    const remote = await hookrelay(['events', 'list', '--url', 'http://192.0.2.10:8080'], { HOOKRELAY_DATA_DIR: dataDir });
    expect(remote.code).toBe(1);
    expect(remote.stderr).toContain('Remote mode needs the admin token');
  });
});
