import { afterAll, afterEach } from 'vitest';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { installLoopbackTripwire, type LoopbackTripwire } from './loopback-tripwire.js';

/**
 * The set-up every loopback suite shares: a tripwire for the whole file, and a list of things the test
 * started (servers, sinks, receivers), closed newest first after each test.
 */
export function loopbackSuite(): { tripwire: LoopbackTripwire; running: { close(): Promise<void> }[] } {
  const tripwire = installLoopbackTripwire();
  const running: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const item of running.splice(0).reverse()) await item.close();
  });
  afterAll(() => {
    tripwire.uninstall();
    removeTempDirs();
  });
  return { tripwire, running };
}
